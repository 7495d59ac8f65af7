"""Secret shapes for the masking tests: (how it is said, the value that must vanish). Every value
is fake, made for these tests in the formats the rule sets document (gitleaks' rules and their
test cases, detect-secrets' plugins, the providers' own docs); none was ever a real key."""

from __future__ import annotations

import re

HEX32 = "9f86d081884c7d659a2feaa0c55ad015"
HEX64 = "a3f1c9e27b4d86f05e13c7a9d2b8e64f1c0a97d35e28b6f4c1d09a7e3b5f8c26"

CORPUS: list[tuple[str, str]] = [
    # a known prefix behind NAME=
    ("export AWS_ACCESS_KEY_ID=AKIAQ3EGRT5KZ7XW2YLM", "AKIAQ3EGRT5KZ7XW2YLM"),
    ("HF_TOKEN=hf_kQ3mZr8VtYw2LpXc5NbG7dJh4SfA9eUo1R", "hf_kQ3mZr8VtYw2LpXc5NbG7dJh4SfA9eUo1R"),
    ("GITHUB_TOKEN=ghp_R8kQ2mZx7VtYw3LpNc5bG9dJh4SfA1eUo6Pq", "ghp_R8kQ2mZx7VtYw3LpNc5bG9dJh4SfA1eUo6Pq"),
    ("OPENAI_API_KEY=sk-proj-Xq7Lm2Rt9Vb4Nc8Kd3Hs6Jf1Pw5Zy0Ga", "sk-proj-Xq7Lm2Rt9Vb4Nc8Kd3Hs6Jf1Pw5Zy0Ga"),
    ("NPM_TOKEN=npm_4kQ9mZr2VtYw8LpXc5NbG7dJh3SfA1eUo6Rq", "npm_4kQ9mZr2VtYw8LpXc5NbG7dJh3SfA1eUo6Rq"),
    ("GITLAB_TOKEN=glpat-Zq8xR2kLm9Vt4Yw7Np3c", "glpat-Zq8xR2kLm9Vt4Yw7Np3c"),
    ("SLACK_BOT_TOKEN=xoxb-2048613579-4096827153024-Qm8rZt2VxYw9LpKc5NbG7dJh",
     "xoxb-2048613579-4096827153024-Qm8rZt2VxYw9LpKc5NbG7dJh"),
    ("GOOGLE_API_KEY=AIzaSyD4kQ9mZr2VtYw8LpXc5NbG7dJh3SfA1eU", "AIzaSyD4kQ9mZr2VtYw8LpXc5NbG7dJh3SfA1eU"),
    ("STRIPE_SECRET_KEY=sk_live_51Hq8ZrKt2VxYw9LpKc5NbG7dJh3SfA", "sk_live_51Hq8ZrKt2VxYw9LpKc5NbG7dJh3SfA"),
    ("ANTHROPIC_API_KEY=sk-ant-api03-" + "Qm8rZt2VxYw9LpKc5NbG7dJh3SfA1eUo6R" * 3 + "Zx7VtYw3LpAA",
     "sk-ant-api03-" + "Qm8rZt2VxYw9LpKc5NbG7dJh3SfA1eUo6R" * 3 + "Zx7VtYw3LpAA"),
    # a value after a key word
    ("the db password=hunter2 for now", "hunter2"),
    ("password: Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("token=q8Zr2VtYw9LpKc5N", "q8Zr2VtYw9LpKc5N"),
    ("DB_PASSWORD=s3cr3tpass", "s3cr3tpass"),
    ("REDIS_PASSWORD=correcthorsebattery", "correcthorsebattery"),
    ("MYSQL_ROOT_PASSWORD='Xk2!mQ9@zL'", "Xk2!mQ9@zL"),
    ('{"api_key": "Zq9rT4wLm2Xc8VbN"}', "Zq9rT4wLm2Xc8VbN"),
    ("secret_key = 'django-insecure-q8#zr2^vt9w!lp'", "django-insecure-q8#zr2^vt9w!lp"),
    ("client_secret: Vq7Lm2Rt9Xb4Nc8Kd3Hs", "Vq7Lm2Rt9Xb4Nc8Kd3Hs"),
    ("auth_token=Rt9Vb4Nc8Kd3Hs6Jf1", "Rt9Vb4Nc8Kd3Hs6Jf1"),
    ("the access_key: qw3rtyuiopasdfgh", "qw3rtyuiopasdfgh"),
    ("passwd = plumber7", "plumber7"),
    ("pwd=Gr33nTea", "Gr33nTea"),
    ("my password is B4nana!split", "B4nana!split"),
    ('x-api-key: 7d9Fq2Lm8Zr4Vt6Yw', "7d9Fq2Lm8Zr4Vt6Yw"),
    ("PGPASSWORD=wh1teRabbit psql -h db", "wh1teRabbit"),
    # credentials in URLs and on command lines
    ("postgres://admin:pa55w0rdZ@db.example.com:5432/app", "pa55w0rdZ"),
    ("git clone https://oauth2:glpat-Lq2Zr8Vt4Yw7Np3cXk9m@gitlab.example.com/a/b.git", "glpat-Lq2Zr8Vt4Yw7Np3cXk9m"),
    ("redis://:Sn0wflakeQ@cache.internal:6379/0", "Sn0wflakeQ"),
    ("curl -u alice:wonderland42 https://api.example.com/v1", "wonderland42"),
    ("sshpass -p 'Sup3rS3cret!' ssh root@10.0.0.5", "Sup3rS3cret!"),
    ("mysql -uroot -pMyS3cretPw shop", "MyS3cretPw"),
    ("mysqldump --password=Dump1ngPw shop > shop.sql", "Dump1ngPw"),
    ('curl -H "Authorization: Bearer 7f3a9c2e1b8d4f6a0c5e9b2d7a1f3c8e" https://api.example.com',
     "7f3a9c2e1b8d4f6a0c5e9b2d7a1f3c8e"),
    ("Authorization: Basic YWxpY2U6d29uZGVybGFuZDQy", "YWxpY2U6d29uZGVybGFuZDQy"),
    # single-case and hex tokens
    (f"the api key {HEX32} works", HEX32),
    ("twilio SK0a1b2c3d4e5f60718293a4b5c6d7e8f9", "SK0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ("DD_API_KEY=0a1b2c3d4e5f60718293a4b5c6d7e8f9", "0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ("shopify 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", "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"),
    (f"DIGITALOCEAN_TOKEN=dop_v1_{HEX64}", f"dop_v1_{HEX64}"),
    (f"SENTRY_DSN=https://{HEX32}@o450123.ingest.sentry.io/5512345", HEX32),
    ("ASIAY34FZKBOKMUTVV7A is the session id", "ASIAY34FZKBOKMUTVV7A"),
    ("AGE-SECRET-KEY-1QQPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE6MU",
     "1QQPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE6MU"),
    ("Bearer 0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3", "0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3"),
    ("mailgun key-0a1b2c3d4e5f60718293a4b5c6d7e8f9", "0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ("databricks dapi0a1b2c3d4e5f60718293a4b5c6d7e8f9", "dapi0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ("an upper one 7KQ2M9ZR4VT8YW3LPXC5NBG7", "7KQ2M9ZR4VT8YW3LPXC5NBG7"),
    ("a lower one k7q2m9zr4vt8yw3lpxc5nbg7", "k7q2m9zr4vt8yw3lpxc5nbg7"),
    # more providers' formats (gitleaks' rules)
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"),
    ("pypi-AgEIcHlwaS5vcmcCJDk4ZTc2Yzg1LTQ5ZmItNGQ1Mi04ZmQxLWIyNzc0ZTk3MWQ2NQACKlszLCJm",
     "pypi-AgEIcHlwaS5vcmcCJDk4ZTc2Yzg1LTQ5ZmItNGQ1Mi04ZmQxLWIyNzc0ZTk3MWQ2NQACKlszLCJm"),
    ("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",
     "ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"),
    ("github_pat_11ABCDEFG0abcdefghijkl_MNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJK",
     "11ABCDEFG0abcdefghijkl_MNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJK"),
    ("heroku HRKU-AAq8Zr2VtYw9LpKc5NbG7dJh3SfA1eUo6Rq8Zr2VtYw9L", "HRKU-AAq8Zr2VtYw9LpKc5NbG7dJh3SfA1eUo6Rq8Zr2VtYw9L"),
    ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY9 is the aws secret", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY9"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz\n"
     "-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz"),
]

# Printed by tools (`cat .htpasswd`, `ssh-add`, `sudo -S`, `az storage … generate-sas`): stored
# password hashes, what was typed at a prompt the tool echoed, a SAS signature with its escapes.
TOOL_PRINTED: list[tuple[str, str]] = [
    ("admin:$apr1$Jx8Qz1lK$HqJZimcKQFAMYayBlzkrA/", "HqJZimcKQFAMYayBlzkrA/"),
    ("admin:$apr1$Jx8Qz1lK$HqJZimcKQFAMYayBlzkrA/", "Jx8Qz1lK"),  # the salt goes too
    ("bob:$2y$05$c4WoMPo3SXsafkva.HHa6uXQZWr7oboPiC2bT/r7q1BB8I2s0BRqC",
     "c4WoMPo3SXsafkva.HHa6uXQZWr7oboPiC2bT/r7q1BB8I2s0BRqC"),
    ("carol:$2b$12$Wq9zLx2Rt7Vb4Nc8Kd3HsOeJf1Pw5Zy0GaQmT6uXrI8cE4nBd2LhS", "Wq9zLx2Rt7Vb4Nc8Kd3HsOeJf1Pw5Zy0GaQmT6uXrI8cE4nBd2LhS"),
    ("dave:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "W6ph5Mm5Pz8GgiULbPgzG37mj9g"),
    ("erin:{SSHA}Zq8xRkLmVtYwNpcXkmQLpVtYwRzAb", "Zq8xRkLmVtYwNpcXkmQLpVtYwRzAb"),
    ("root:$6$rounds=5000$Qm8rZt2V$Xk9mQ2Lp5Vt8Yw3Rz0aB7cD1eF4gH6iJ9kL2mN5oP8qR1sT4uV7wX0yZ3aB6cD9eF2gH5iJ8kL1mN4oP7qR0sT:19700:0:99999:7:::",
     "Xk9mQ2Lp5Vt8Yw3Rz0aB7cD1eF4gH6iJ9kL2mN5oP8qR1sT4uV7wX0yZ3aB6cD9eF2gH5iJ8kL1mN4oP7qR0sT"),
    ("$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHRzYWx0$RdescudvJCsgt3ub+b+dWRWJTmaaJObGhHqJZimcKQF",
     "RdescudvJCsgt3ub+b+dWRWJTmaaJObGhHqJZimcKQF"),
    ("Enter passphrase: hunter2-xyz", "hunter2-xyz"),
    ("Enter passphrase for key '/home/alex/.ssh/id_ed25519': Rosebud-Sled", "Rosebud-Sled"),
    ("[sudo] password for alex: Tangerine-Dream", "Tangerine-Dream"),
    ("Enter PEM pass phrase: Marigold77", "Marigold77"),
    ("Password for 'https://alex@github.com': Spaghetti-Western", "Spaghetti-Western"),
    ("Enter host password for user 'alex': Zeppelin-Lead", "Zeppelin-Lead"),
    ("Password: correcthorsebattery", "correcthorsebattery"),
    ("https://alexstore.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-31T00:00:00Z"
     "&spr=https&sig=4kQ9mZr2VtYw8LpX%2Fc5NbG7dJh3SfA1eUo6RqT0%3D", "4kQ9mZr2VtYw8LpX%2Fc5NbG7dJh3SfA1eUo6RqT0%3D"),
    ("se=2026-12-31&sp=r&sv=2022-11-02&sr=c&sig=%2BZq8xR2kLm9Vt4Yw7Np3c%2BXk9mQ2Lp5Vt8Yw3Rz0%3D",
     "%2BZq8xR2kLm9Vt4Yw7Np3c%2BXk9mQ2Lp5Vt8Yw3Rz0%3D"),
]
CORPUS += TOOL_PRINTED

# Said next to the secrets and never masked: the key words themselves and what only looks close.
KEPT = [
    "forgot my password again", "the token expired yesterday", "rotate the api key monthly", "PWD=/home/alex/app",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it", "session 0d6e4079-e2c1-4aa5-bd2c-b1a8b0c54d12",
    "monkey = banana", "token = get_token()", "password = os.environ['DB_PASSWORD']", "key = 3",
    "tests/test_login_flow_2024.py", "python3.11 -m pytest -q", "the password field is empty",
    "https://docs.python.org/3/library/re.html", "secret: ${SECRET_FROM_VAULT}", "version v1.24.3-rc2",
    "a TwoWordsCamelCaseIdentifierName here",
    'echo "$1$2" costs $5$ each, see $HOME_DIRECTORY_PATH_LONG', "signature=inspect.signature(func)",
    "the password: forgotten", "Enter passphrase: \nIdentity added: /home/alex/.ssh/id_ed25519 (alex@laptop)",
    "sig=${SAS_SIGNATURE_FROM_THE_VAULT}", "x = {SOME_LONG_PLACEHOLDER_NAME}",
]


def pieces(value: str) -> list[str]:
    """The parts of `value` a search could ask for and find, were it indexed: its runs of
    letters and digits of six or more that hold a digit or are eight long."""
    return [p for p in re.findall(r"[A-Za-z0-9]+", value) if len(p) >= 6 and (len(p) >= 8 or re.search(r"\d", p))]

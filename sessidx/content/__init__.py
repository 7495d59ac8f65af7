"""The content index: what was said in each session, searchable with SQLite FTS5.

It lives in `$XDG_CACHE_HOME/sessidx/content.sqlite` (folder 0700, file 0600), never beside the
agents' files, and holds, per session, the user prompts, the assistant replies and the short
words of tool calls (commands, paths), of tool outputs the parts people search for (see
sessidx/tool_output.py), no images or other payloads, and never a token that looks like a
secret. `SESSIDX_CONTENT=0` turns it off; `sessidx search --drop` deletes it.

The FTS5 table is contentless: the index holds the words, not the text. A row is a stretch of
one session's conversation (consecutive records, up to CHUNK_TEXT characters); its `chunk`
entry names the session, the places of its records (byte offsets in a JSONL transcript, or
indexes in a conversation), from which a hit's snippet is read again, and the token each of
its messages starts at, which with FTS5's instances tells words said in one message from words
said in neighbouring ones (content/tokens.py). `term` holds every indexed term spelt
backwards, for typos early in a word (content/near.py). Row ids count up
from 1 and are never used twice, which keeps FTS5's lists of them small. FTS5 here (SQLite
3.40) cannot delete a contentless row without its text, so when a source is read again from
its start, or is gone, its chunks are deleted and its rows left behind, dead: every search
joins `chunk` and skips them. Once dead rows outnumber live ones, the index is rebuilt.

Appends are read incrementally: per source, how far it was indexed and the 64 bytes just
before that point. Same bytes there: only what follows is read. Shorter, or other bytes: the
source was rewritten and is indexed again. Lines over LINE_CAP are skipped unread.
"""

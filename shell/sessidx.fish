# sessidx.fish: Ctrl-O picks a coding-agent session and resumes it in this shell.
#
# Setup (~/.config/fish/config.fish):  sessidx init fish | source
#
# Variables read:
# - $SESSIDX_KEY     bind key (default \co); set it empty to bind nothing
# - $SESSIDX_ACCEPT  0 = put the command on the line for editing instead of running it
# - $SESSIDX_FZF, $SESSIDX_FZF_OPTS  read by sessidx itself

function __sessidx_setup -d 'Define and bind the sessidx widget'
    status is-interactive; or return 0

    function sessidx-widget -d 'Pick a coding-agent session and resume it here'
        set -l typed (commandline | string collect)
        set -l line
        # Queued first: Ctrl-C at the branch question interrupts fish too, which then skips the
        # rest of this function; the prompt still comes back.
        commandline -f repaint
        set -g __sessidx_line
        if __sessidx_warm
            set line $__sessidx_line
        else
            set line (SESSIDX_SHELL=fish command sessidx pick </dev/tty); or set line
        end
        set -e __sessidx_line
        if test -z "$line"
            commandline -f repaint
            return 0
        end
        commandline -r -- "$line"
        if test "$SESSIDX_ACCEPT" = 0
            commandline -f repaint
            return 0
        end
        if test -n "$typed"
            # what was typed comes back at the next prompt, as zsh's push-line does
            set -g __sessidx_typed $typed
            function __sessidx_restore --on-event fish_postexec
                functions -e __sessidx_restore
                commandline -- $__sessidx_typed
                set -e __sessidx_typed
            end
        end
        # Pressed in vi normal mode: insert mode for the next prompt, as fish's own Enter does there.
        if test "$fish_key_bindings" = fish_vi_key_bindings; and test "$fish_bind_mode" != insert
            set fish_bind_mode insert
        end
        commandline -f repaint execute
    end

    # The warm press, with no Python before fzf: fzf started here as the last `sessidx pick` in
    # this shell at this terminal size wrote down (picker.keep_launch: its argv, the rows file,
    # what must not have changed), over the kept rows with this folder's first; `sessidx resume`
    # after Enter. Returns 1 when the kept launch does not fit: then `sessidx pick` does it all.
    function __sessidx_warm
        set -l dir $XDG_CACHE_HOME
        string match -q -- '/*' "$dir"; or set dir $HOME/.cache
        set dir $dir/sessidx
        set -l launch $dir/picker-launch-fish-$COLUMNS"x"$LINES
        test -O $dir; and test -O $launch; or return 1
        set -l w (string split0 <$launch)
        test (count $w) -gt 4; or return 1
        test "$w[1]" = sessidx-launch-2; and test -O "$w[2]"; and test -O "$w[2].first"; or return 1
        string match -qr '^[0-9]+$' -- $w[3] $w[4]; or return 1
        set -l n $w[3]
        set -l m $w[4]
        set -l i 5
        while test $i -lt (math 5 + $n)
            set -l name (string split -m1 = -- $w[$i])[1]
            string match -qr '^[A-Za-z_][A-Za-z0-9_]*$' -- $name; or return 1
            set -l value (string join ' ' -- $$name)
            test "$w[$i]" = "$name=$value"; or return 1
            set i (math $i + 1)
        end
        while test $i -lt (math 5 + $n + $m)
            test $launch -nt $w[$i]; or return 1
            set i (math $i + 1)
        end
        test -x "$w[$i]"; or return 1
        # the press's time (ms; fish has no clock of its own, BSD date no %N), which the fresh
        # list's wait for the SSH hosts' refresh counts from
        set -l pressed (command date +%s%3N 2>/dev/null)
        string match -qr '^[0-9]{13,}$' -- "$pressed"; or set pressed (command date +%s 2>/dev/null)000
        # this folder's rows first: awk, when grep finds this folder among the rows' (a line each)
        set -l out
        if not string match -q -- '*'\n'*' $PWD; and LC_ALL=C command grep -qxF -- $PWD $w[2].folders 2>/dev/null
            set out (__SESSIDX_HERE=$PWD LC_ALL=C command awk $__sessidx_here_first $w[2].folders $w[2] |
                SESSIDX_PRESSED_MS=$pressed SESSIDX_SHELL=fish SHELL=/bin/sh $w[$i..-1])
        else
            set out (SESSIDX_PRESSED_MS=$pressed SESSIDX_SHELL=fish SHELL=/bin/sh $w[$i..-1] <$w[2].first)
        end
        switch $status
            case 0
            case 1 130 # no match; Esc or Ctrl-C
                return 0
            case '*'
                return 1
        end
        # fzf printed the key pressed, the key the check said yes to (hex), the row accepted
        set -q out[3]; or return 0
        set -l key (string split -r -m1 \t -- $out[3])[-1]
        test -n "$key"; or return 0
        if test "$out[1]" = alt-enter
            set -g __sessidx_line (SESSIDX_SHELL=fish command sessidx resume --checked $out[2] --allow-permissive -- $key </dev/tty)
        else
            set -g __sessidx_line (SESSIDX_SHELL=fish command sessidx resume --checked $out[2] -- $key </dev/tty)
        end
        or set -g __sessidx_line
        return 0
    end

    # awk over the rows' folders, then the rows: the column names, this folder's rows, the rest,
    # FIRST_SCREEN_ROWS (sessidx/picker.py) rows in all.
    set -g __sessidx_here_first 'BEGIN { here = ENVIRON["__SESSIDX_HERE"]; most = 2000 }
    NR == FNR { mine[FNR] = ($0 == here); next }
    FNR == 1 || mine[FNR - 1] { if (shown++ <= most) print; next }
    n < most { rest[n++] = $0 }
    END { for (k = 0; k < n && shown + k <= most; k++) print rest[k] }'

    # Typed by hand, `sessidx` and `sessidx resume ID` cd this shell too.
    function sessidx -d 'Find and resume coding-agent sessions'
        set -l verb pick
        set -q argv[1]; and set verb $argv[1]
        if contains -- $verb pick resume; and not contains -- --json $argv
            set -q argv[1]; or set argv pick
            set -l line (SESSIDX_SHELL=fish command sessidx $argv); or return $status
            test -n "$line"; or return 1
            builtin history append -- "$line" 2>/dev/null
            eval "$line"
        else
            command sessidx $argv
        end
    end

    set -l key \co
    if set -q SESSIDX_KEY
        test -n "$SESSIDX_KEY"; or return 0
        set key $SESSIDX_KEY
    end
    bind $key sessidx-widget
    bind -M insert $key sessidx-widget
end

__sessidx_setup
functions -e __sessidx_setup

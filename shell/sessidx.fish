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
        # Queued first: Ctrl-C at the branch question interrupts fish too, which then skips the
        # rest of this function; the prompt still comes back.
        commandline -f repaint
        set -l line (SESSIDX_SHELL=fish command sessidx pick </dev/tty)
        if test $status -ne 0; or test -z "$line"
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

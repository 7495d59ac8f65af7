# sessidx.bash: Ctrl-O picks a coding-agent session and resumes it in this shell.
#
# Setup (~/.bashrc):  eval "$(sessidx init bash)"
#
# Variables read:
# - $SESSIDX_KEY     readline key to bind (default \C-o); set it empty to bind nothing
#                    (keep Ctrl-O for operate-and-get-next: SESSIDX_KEY='\C-x\C-a')
# - $SESSIDX_ACCEPT  0 = put the command on the line for editing instead of running it
# - $SESSIDX_FZF, $SESSIDX_FZF_OPTS  read by sessidx itself

if [[ $- == *i* ]]; then

  # bind -x cannot run accept-line itself, so the key runs a three-key macro: the first
  # calls this function, the second is rebound here to accept-line or to nothing, and the
  # third, left over for the next prompt's line when the second accepted, puts back what was
  # typed before the key (zsh's push-line). The picker prints the resume line
  # ("builtin cd -- DIR && agent ..."), already quoted.
  function sessidx-widget {
    \builtin local line typed="$READLINE_LINE" # quoted: through \builtin, local is no declaration
    if line=$(SESSIDX_SHELL=bash \command sessidx pick < /dev/tty) && [[ -n $line ]]; then
      READLINE_LINE=$line
      READLINE_POINT=${#line}
      if [[ ${SESSIDX_ACCEPT-1} != 0 ]]; then
        __sessidx_typed=$typed
        __sessidx_then accept-line
        return 0
      fi
    fi
    __sessidx_then redraw-current-line
  }

  function __sessidx_restore {
    if [[ -n ${__sessidx_typed-} ]]; then
      READLINE_LINE=$__sessidx_typed
      READLINE_POINT=${#READLINE_LINE}
    fi
    \builtin unset __sessidx_typed
  }

  function __sessidx_then {
    \builtin local map
    for map in emacs-standard vi-command vi-insert; do
      \bind -m "$map" "\"\\e[9971~\": $1"
    done
  }

  # Typed by hand, `sessidx` and `sessidx resume ID` cd this shell too. (`function NAME`:
  # the name after the keyword is never alias-expanded, so an alias `sessidx` cannot break this.)
  function sessidx {
    \builtin local line
    case "${1-pick}" in
      pick | resume)
        if [[ " $* " == *" --json "* ]]; then
          \command sessidx "$@"
          return
        fi
        line=$(SESSIDX_SHELL=bash \command sessidx "${@:-pick}") || return
        [[ -n $line ]] || return 1
        \builtin history -s -- "$line"
        \builtin eval -- "$line"
        ;;
      *) \command sessidx "$@" ;;
    esac
  }

  # `\bind`, not `\builtin bind`: no alias, but ble.sh's own `bind` function still sees it.
  if [[ ${SESSIDX_KEY-x} != "" ]] && ((BASH_VERSINFO[0] < 4)); then
    # bash 3.2 (macOS) has no READLINE_LINE: the key runs the `sessidx` function as a line.
    \bind "\"${SESSIDX_KEY:-\\C-o}\": \"\\C-a\\C-ksessidx\\C-m\""
  elif [[ ${SESSIDX_KEY-x} != "" ]]; then
    __sessidx_key=${SESSIDX_KEY:-\\C-o}
    for __sessidx_map in emacs-standard vi-command vi-insert; do
      \bind -m "$__sessidx_map" -x '"\e[9970~": sessidx-widget'
      \bind -m "$__sessidx_map" '"\e[9971~": redraw-current-line'
      \bind -m "$__sessidx_map" -x '"\e[9972~": __sessidx_restore'
      \bind -m "$__sessidx_map" "\"$__sessidx_key\": \"\\e[9970~\\e[9971~\\e[9972~\""
    done
    \builtin unset __sessidx_key __sessidx_map
  fi

fi

# sessidx.zsh: Ctrl-O picks a coding-agent session and resumes it in this shell.
#
# Setup (~/.zshrc):  eval "$(sessidx init zsh)"
#
# Variables read:
# - $SESSIDX_KEY     bindkey string to bind (default ^O); set it empty to bind nothing
#                    (keep Ctrl-O for accept-line-and-down-history: SESSIDX_KEY='^X^A')
# - $SESSIDX_ACCEPT  0 = put the command on the line for editing instead of running it
# - $SESSIDX_FZF, $SESSIDX_FZF_OPTS  read by sessidx itself

# Until `emulate` below, every word is backslash-quoted so user aliases cannot expand.
if [[ -o interactive ]]; then

  function sessidx-widget {
    \builtin emulate -L zsh -o no_aliases -o pipefail
    \builtin local line
    line=$(SESSIDX_SHELL=zsh \command sessidx pick < /dev/tty)
    if (( $? != 0 )) || [[ -z $line ]]; then
      \builtin zle reset-prompt
      return 0
    fi
    if [[ ${SESSIDX_ACCEPT-1} == 0 ]]; then
      BUFFER=$line
      CURSOR=${#BUFFER}
      \builtin zle reset-prompt
      return 0
    fi
    \builtin zle push-line # what was typed comes back at the next prompt
    BUFFER=$line
    \builtin zle reset-prompt # fzf cleared the prompt line: show the command after the prompt
    \builtin zle accept-line
  }
  \builtin zle -N sessidx-widget

  # Typed by hand, `sessidx` and `sessidx resume ID` cd this shell too. (`function NAME`:
  # the name after the keyword is never alias-expanded, so an alias `sessidx` cannot break this.)
  function sessidx {
    \builtin local line
    case "${1-pick}" in
      pick | resume)
        if (( ${@[(I)--json]} )); then
          \command sessidx "$@"
          return
        fi
        line=$(SESSIDX_SHELL=zsh \command sessidx "${@:-pick}") || return
        [[ -n $line ]] || return 1
        \builtin print -rs -- "$line"
        \builtin eval -- "$line"
        ;;
      *) \command sessidx "$@" ;;
    esac
  }

  if [[ ${SESSIDX_KEY-x} != "" ]]; then
    \builtin bindkey -M emacs "${SESSIDX_KEY:-^O}" sessidx-widget
    \builtin bindkey -M viins "${SESSIDX_KEY:-^O}" sessidx-widget
    \builtin bindkey -M vicmd "${SESSIDX_KEY:-^O}" sessidx-widget
  fi

fi

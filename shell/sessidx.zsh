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
    \builtin local line __sessidx_line
    if __sessidx_warm; then
      line=$__sessidx_line
    else
      line=$(SESSIDX_SHELL=zsh \command sessidx pick < /dev/tty) || line=
    fi
    if [[ -z $line ]]; then
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

  # The warm press, with no Python before fzf: fzf started here as the last `sessidx pick` in
  # this shell at this terminal size wrote down (picker.keep_launch: its argv, the rows file,
  # what must not have changed), over the kept rows with this folder's first; `sessidx resume`
  # after Enter. Returns 1 when the kept launch does not fit: then `sessidx pick` does it all.
  function __sessidx_warm {
    \builtin emulate -L zsh -o no_aliases -o extended_glob
    local dir=${XDG_CACHE_HOME-} launch e name i n m out row key checked
    local -i pressed
    local -a w
    [[ $dir == /* ]] || dir=${HOME-}/.cache
    dir=$dir/sessidx
    launch=$dir/picker-launch-zsh-${COLUMNS-0}x${LINES-0}
    [[ -O $dir && -O $launch ]] || return 1
    w=("${(@0)"$(<$launch)"}") # NUL-terminated fields: the last, empty, is no field
    (( ${#w} > 4 )) && [[ -z ${w[-1]} ]] || return 1
    w[-1]=()
    [[ ${w[1]} == sessidx-launch-2 && -O ${w[2]} && -O ${w[2]}.first && ${w[3]} == <-> && ${w[4]} == <-> ]] || return 1
    n=${w[3]} m=${w[4]}
    for (( i = 5; i < 5 + n; i++ )); do
      e=${w[i]} name=${e%%=*}
      [[ $name == [A-Za-z_][A-Za-z0-9_]# && $e == "$name=${(P)name-}" ]] || return 1
    done
    for (( ; i < 5 + n + m; i++ )); do
      [[ ! -e ${w[i]} || $launch -nt ${w[i]} ]] || return 1 # zsh: never newer than nothing
    done
    [[ -x ${w[i]-} ]] || return 1
    # the press's time (ms), which the fresh list's wait for the SSH hosts' refresh counts from
    zmodload -F zsh/datetime p:EPOCHREALTIME 2> /dev/null && (( pressed = EPOCHREALTIME * 1000 ))
    # this folder's rows first: awk, when grep finds this folder among the rows' (a line each)
    if [[ $PWD != *$'\n'* ]] && LC_ALL=C \command grep -qxF -- $PWD ${w[2]}.folders 2> /dev/null; then
      out=$(__SESSIDX_HERE=$PWD LC_ALL=C \command awk $__sessidx_here_first ${w[2]}.folders ${w[2]} |
        SESSIDX_PRESSED_MS=$pressed SESSIDX_SHELL=zsh SHELL=/bin/sh "${(@)w[i,-1]}")
    else
      out=$(SESSIDX_PRESSED_MS=$pressed SESSIDX_SHELL=zsh SHELL=/bin/sh "${(@)w[i,-1]}" < ${w[2]}.first)
    fi
    case $? in
      0) ;;
      1 | 130) return 0 ;; # no match; Esc or Ctrl-C
      *) return 1 ;;
    esac
    # fzf printed the key pressed, the key the check said yes to (hex), the row accepted
    checked=${out#*$'\n'} row=${out#*$'\n'*$'\n'}
    checked=${checked%%$'\n'*} key=${row##*$'\t'}
    [[ $out == *$'\n'*$'\n'* && -n $key ]] || return 0
    if [[ ${out%%$'\n'*} == alt-enter ]]; then
      __sessidx_line=$(SESSIDX_SHELL=zsh \command sessidx resume --checked "$checked" --allow-permissive -- $key < /dev/tty)
    else
      __sessidx_line=$(SESSIDX_SHELL=zsh \command sessidx resume --checked "$checked" -- $key < /dev/tty)
    fi || __sessidx_line=
    return 0
  }

  # awk over the rows' folders, then the rows: the column names, this folder's rows, the rest,
  # FIRST_SCREEN_ROWS (sessidx/picker.py) rows in all.
  __sessidx_here_first='BEGIN { here = ENVIRON["__SESSIDX_HERE"]; most = 2000 }
    NR == FNR { mine[FNR] = ($0 == here); next }
    FNR == 1 || mine[FNR - 1] { if (shown++ <= most) print; next }
    n < most { rest[n++] = $0 }
    END { for (k = 0; k < n && shown + k <= most; k++) print rest[k] }'

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

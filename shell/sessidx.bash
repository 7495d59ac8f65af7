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
    \builtin local line typed="$READLINE_LINE" __sessidx_line # quoted: through \builtin, local is no declaration
    if __sessidx_warm; then
      line=$__sessidx_line
    else
      line=$(SESSIDX_SHELL=bash \command sessidx pick < /dev/tty) || line=
    fi
    if [[ -n $line ]]; then
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

  # The warm press, with no Python before fzf: fzf started here as the last `sessidx pick` in
  # this shell at this terminal size wrote down (picker.keep_launch: its argv, the rows file,
  # what must not have changed), over the kept rows with this folder's first; `sessidx resume`
  # after Enter. Returns 1 when the kept launch does not fit: then `sessidx pick` does it all.
  function __sessidx_warm {
    \builtin local dir=${XDG_CACHE_HOME-} launch e name i n m out row key checked __sessidx_pressed=
    \builtin local -a w
    ((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 404)) || return 1 # mapfile -d
    [[ $dir == /* ]] || dir=${HOME-}/.cache
    dir=$dir/sessidx
    launch=$dir/picker-launch-bash-${COLUMNS-0}x${LINES-0}
    [[ -O $dir && -O $launch ]] || return 1
    \builtin mapfile -d '' w < "$launch" || return 1
    [[ ${w[0]-} == sessidx-launch-2 && -O ${w[1]-} && -O ${w[1]-}.first && ${w[2]-} =~ ^[0-9]+$ && ${w[3]-} =~ ^[0-9]+$ ]] || return 1
    n=${w[2]} m=${w[3]}
    for ((i = 4; i < 4 + n; i++)); do
      e=${w[i]-} name=${e%%=*}
      [[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ && $e == "$name=${!name-}" ]] || return 1
    done
    for ((; i < 4 + n + m; i++)); do
      [[ $launch -nt ${w[i]-} ]] || return 1
    done
    [[ -x ${w[i]-} ]] || return 1
    # the press's time (ms), which the fresh list's wait for the SSH hosts' refresh counts from
    if [[ ${EPOCHREALTIME-} == [0-9]* ]]; then
      __sessidx_pressed=$((${EPOCHREALTIME/[.,]/} / 1000))
    else # bash < 5: GNU date's milliseconds (whole seconds let the last press's refresh pass for this one's)
      __sessidx_pressed=$(\command date +%s%3N 2> /dev/null)
      [[ $__sessidx_pressed =~ ^[0-9]+$ ]] || __sessidx_pressed=
    fi
    # this folder's rows first: awk, when grep finds this folder among the rows' (a line each)
    if [[ $PWD != *$'\n'* ]] && LC_ALL=C \command grep -qxF -- "$PWD" "${w[1]}.folders" 2> /dev/null; then
      out=$(__SESSIDX_HERE=$PWD LC_ALL=C \command awk "$__sessidx_here_first" "${w[1]}.folders" "${w[1]}" |
        SESSIDX_PRESSED_MS=$__sessidx_pressed SESSIDX_SHELL=bash SHELL=/bin/sh "${w[@]:i}")
    else
      out=$(SESSIDX_PRESSED_MS=$__sessidx_pressed SESSIDX_SHELL=bash SHELL=/bin/sh "${w[@]:i}" < "${w[1]}.first")
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
      __sessidx_line=$(SESSIDX_SHELL=bash \command sessidx resume --checked "$checked" --allow-permissive -- "$key" < /dev/tty)
    else
      __sessidx_line=$(SESSIDX_SHELL=bash \command sessidx resume --checked "$checked" -- "$key" < /dev/tty)
    fi || __sessidx_line=
    return 0
  }

  # awk over the rows' folders, then the rows: the column names, this folder's rows, the rest,
  # FIRST_SCREEN_ROWS (sessidx/picker.py) rows in all.
  # shellcheck disable=SC2016 # awk's own $0, not the shell's
  __sessidx_here_first='BEGIN { here = ENVIRON["__SESSIDX_HERE"]; most = 2000 }
    NR == FNR { mine[FNR] = ($0 == here); next }
    FNR == 1 || mine[FNR - 1] { if (shown++ <= most) print; next }
    n < most { rest[n++] = $0 }
    END { for (k = 0; k < n && shown + k <= most; k++) print rest[k] }'

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

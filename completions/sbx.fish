# fish completion for sbx
# Generated from sbx's command tree by `npm run generate`; do not edit.
# Install: sbx completion fish > ~/.config/fish/completions/sbx.fish

# __sbx_subcommand PATH WORD: succeeds when WORD names a command under PATH; sets __sbx_next.
function __sbx_subcommand --argument-names path word
    switch "$path|$word"
        case '|exec'
            set -g __sbx_next 'exec'
        case '|run'
            set -g __sbx_next 'run'
        case '|shell'
            set -g __sbx_next 'shell'
        case '|attach'
            set -g __sbx_next 'attach'
        case '|receipts'
            set -g __sbx_next 'receipts'
        case '|recover'
            set -g __sbx_next 'recover'
        case '|logs'
            set -g __sbx_next 'logs'
        case '|cancel'
            set -g __sbx_next 'cancel'
        case '|process'
            set -g __sbx_next 'process'
        case '|ps'
            set -g __sbx_next 'ps'
        case '|jobs'
            set -g __sbx_next 'jobs'
        case '|sandbox'
            set -g __sbx_next 'sandbox'
        case '|image'
            set -g __sbx_next 'image'
        case '|volume'
            set -g __sbx_next 'volume'
        case '|cp'
            set -g __sbx_next 'cp'
        case '|port-forward'
            set -g __sbx_next 'port-forward'
        case '|port'
            set -g __sbx_next 'port'
        case '|mcp'
            set -g __sbx_next 'mcp'
        case '|daemon'
            set -g __sbx_next 'daemon'
        case '|init'
            set -g __sbx_next 'init'
        case '|profile'
            set -g __sbx_next 'profile'
        case '|config'
            set -g __sbx_next 'config'
        case '|completion'
            set -g __sbx_next 'completion'
        case '|help'
            set -g __sbx_next 'help'
        case '|version'
            set -g __sbx_next 'version'
        case 'receipts|list'
            set -g __sbx_next 'receipts list'
        case 'receipts|show'
            set -g __sbx_next 'receipts show'
        case 'receipts|wait'
            set -g __sbx_next 'receipts wait'
        case 'receipts|refresh'
            set -g __sbx_next 'receipts refresh'
        case 'receipts|resubmit'
            set -g __sbx_next 'receipts resubmit'
        case 'receipts|export'
            set -g __sbx_next 'receipts export'
        case 'receipts|prune'
            set -g __sbx_next 'receipts prune'
        case 'receipts|verify'
            set -g __sbx_next 'receipts verify'
        case 'receipts|key'
            set -g __sbx_next 'receipts key'
        case 'receipts|timeline'
            set -g __sbx_next 'receipts timeline'
        case 'process|start'
            set -g __sbx_next 'process start'
        case 'process|list'
            set -g __sbx_next 'process list'
        case 'process|show'
            set -g __sbx_next 'process show'
        case 'process|logs'
            set -g __sbx_next 'process logs'
        case 'process|result'
            set -g __sbx_next 'process result'
        case 'process|stdin'
            set -g __sbx_next 'process stdin'
        case 'process|attach'
            set -g __sbx_next 'process attach'
        case 'process|signal'
            set -g __sbx_next 'process signal'
        case 'process|stop'
            set -g __sbx_next 'process stop'
        case 'process|rm'
            set -g __sbx_next 'process rm'
        case 'jobs|submit'
            set -g __sbx_next 'jobs submit'
        case 'jobs|run'
            set -g __sbx_next 'jobs run'
        case 'jobs|list'
            set -g __sbx_next 'jobs list'
        case 'jobs|show'
            set -g __sbx_next 'jobs show'
        case 'jobs|logs'
            set -g __sbx_next 'jobs logs'
        case 'jobs|wait'
            set -g __sbx_next 'jobs wait'
        case 'jobs|cancel'
            set -g __sbx_next 'jobs cancel'
        case 'sandbox|create'
            set -g __sbx_next 'sandbox create'
        case 'sandbox|list' 'sandbox|ls'
            set -g __sbx_next 'sandbox list'
        case 'sandbox|show'
            set -g __sbx_next 'sandbox show'
        case 'sandbox|stats'
            set -g __sbx_next 'sandbox stats'
        case 'sandbox|update'
            set -g __sbx_next 'sandbox update'
        case 'sandbox|egress'
            set -g __sbx_next 'sandbox egress'
        case 'sandbox|stop'
            set -g __sbx_next 'sandbox stop'
        case 'sandbox|start'
            set -g __sbx_next 'sandbox start'
        case 'sandbox|pause'
            set -g __sbx_next 'sandbox pause'
        case 'sandbox|resume'
            set -g __sbx_next 'sandbox resume'
        case 'sandbox|rm'
            set -g __sbx_next 'sandbox rm'
        case 'image|pull'
            set -g __sbx_next 'image pull'
        case 'image|import'
            set -g __sbx_next 'image import'
        case 'image|list' 'image|ls'
            set -g __sbx_next 'image list'
        case 'image|rm'
            set -g __sbx_next 'image rm'
        case 'volume|create'
            set -g __sbx_next 'volume create'
        case 'volume|list' 'volume|ls'
            set -g __sbx_next 'volume list'
        case 'volume|show'
            set -g __sbx_next 'volume show'
        case 'volume|rm'
            set -g __sbx_next 'volume rm'
        case 'daemon|run'
            set -g __sbx_next 'daemon run'
        case 'daemon|start'
            set -g __sbx_next 'daemon start'
        case 'daemon|stop'
            set -g __sbx_next 'daemon stop'
        case 'daemon|status'
            set -g __sbx_next 'daemon status'
        case 'profile|add'
            set -g __sbx_next 'profile add'
        case 'profile|list' 'profile|ls'
            set -g __sbx_next 'profile list'
        case 'profile|use'
            set -g __sbx_next 'profile use'
        case 'profile|show'
            set -g __sbx_next 'profile show'
        case 'profile|rm'
            set -g __sbx_next 'profile rm'
        case 'config|get'
            set -g __sbx_next 'config get'
        case 'config|set'
            set -g __sbx_next 'config set'
        case '*'
            return 1
    end
end

# __sbx_takes_value PATH OPTION: whether OPTION at PATH reads the next word as its value.
function __sbx_takes_value --argument-names path option
    switch "$path|$option"
        case '|--profile' '|--api-url' 'exec|-s' 'exec|--sandbox' 'exec|--shell' 'exec|--timeout'
            return 0
        case 'exec|--client-timeout' 'exec|--cwd' 'exec|-e' 'exec|--env' 'exec|--env-file' 'exec|--idempotency-key'
            return 0
        case 'exec|--detach-keys' 'exec|--profile' 'exec|--api-url' 'run|--name' 'run|--image' 'run|--isolation'
            return 0
        case 'run|-p' 'run|--publish' 'run|-l' 'run|--label' 'run|-v' 'run|--volume'
            return 0
        case 'run|--allow-domain' 'run|--deny-domain' 'run|--allow-cidr' 'run|--egress-policy' 'run|--memory' 'run|--pids'
            return 0
        case 'run|--cpus' 'run|--tmp-size' 'run|--disk' 'run|--shell' 'run|--timeout' 'run|--client-timeout'
            return 0
        case 'run|--cwd' 'run|-e' 'run|--env' 'run|--env-file' 'run|--profile' 'run|--api-url'
            return 0
        case 'shell|-s' 'shell|--sandbox' 'shell|--cwd' 'shell|-e' 'shell|--env' 'shell|--timeout'
            return 0
        case 'shell|--detach-keys' 'shell|--idempotency-key' 'shell|--profile' 'shell|--api-url' 'attach|-s' 'attach|--sandbox'
            return 0
        case 'attach|--detach-keys' 'attach|--profile' 'attach|--api-url' 'receipts|--profile' 'receipts|--api-url' 'receipts list|--classification'
            return 0
        case 'receipts list|--limit' 'receipts list|--profile' 'receipts list|--api-url' 'receipts show|--profile' 'receipts show|--api-url' 'receipts wait|--timeout'
            return 0
        case 'receipts wait|--profile' 'receipts wait|--api-url' 'receipts refresh|--profile' 'receipts refresh|--api-url' 'receipts resubmit|--client-timeout' 'receipts resubmit|--profile'
            return 0
        case 'receipts resubmit|--api-url' 'receipts export|--since' 'receipts export|--bundle' 'receipts export|--profile' 'receipts export|--api-url' 'receipts prune|--before'
            return 0
        case 'receipts prune|--profile' 'receipts prune|--api-url' 'receipts verify|--bundle' 'receipts verify|--key' 'receipts verify|--profile' 'receipts verify|--api-url'
            return 0
        case 'receipts key|--profile' 'receipts key|--api-url' 'receipts timeline|--since' 'receipts timeline|--limit' 'receipts timeline|--html' 'receipts timeline|--profile'
            return 0
        case 'receipts timeline|--api-url' 'recover|--profile' 'recover|--api-url' 'logs|-s' 'logs|--sandbox' 'logs|--after'
            return 0
        case 'logs|--profile' 'logs|--api-url' 'cancel|-s' 'cancel|--sandbox' 'cancel|--reason' 'cancel|--timeout'
            return 0
        case 'cancel|--profile' 'cancel|--api-url' 'process|--profile' 'process|--api-url' 'process start|-s' 'process start|--sandbox'
            return 0
        case 'process start|--name' 'process start|--shell' 'process start|--restart' 'process start|--max-restarts' 'process start|--backoff' 'process start|--max-backoff'
            return 0
        case 'process start|--timeout' 'process start|--cwd' 'process start|-e' 'process start|--env' 'process start|--env-file' 'process start|--idempotency-key'
            return 0
        case 'process start|--profile' 'process start|--api-url' 'process list|-s' 'process list|--sandbox' 'process list|--profile' 'process list|--api-url'
            return 0
        case 'process show|-s' 'process show|--sandbox' 'process show|--profile' 'process show|--api-url' 'process logs|-s' 'process logs|--sandbox'
            return 0
        case 'process logs|--stream' 'process logs|--offset' 'process logs|--limit' 'process logs|--profile' 'process logs|--api-url' 'process result|-s'
            return 0
        case 'process result|--sandbox' 'process result|--wait' 'process result|--profile' 'process result|--api-url' 'process stdin|-s' 'process stdin|--sandbox'
            return 0
        case 'process stdin|--file' 'process stdin|--run' 'process stdin|--profile' 'process stdin|--api-url' 'process attach|-s' 'process attach|--sandbox'
            return 0
        case 'process attach|--detach-keys' 'process attach|--profile' 'process attach|--api-url' 'process signal|-s' 'process signal|--sandbox' 'process signal|--run'
            return 0
        case 'process signal|--profile' 'process signal|--api-url' 'process stop|-s' 'process stop|--sandbox' 'process stop|--grace' 'process stop|--run'
            return 0
        case 'process stop|--profile' 'process stop|--api-url' 'process rm|-s' 'process rm|--sandbox' 'process rm|--grace' 'process rm|--profile'
            return 0
        case 'process rm|--api-url' 'ps|-s' 'ps|--sandbox' 'ps|--profile' 'ps|--api-url' 'jobs|--profile'
            return 0
        case 'jobs|--api-url' 'jobs submit|-s' 'jobs submit|--sandbox' 'jobs submit|--timeout' 'jobs submit|--profile' 'jobs submit|--api-url'
            return 0
        case 'jobs run|-s' 'jobs run|--sandbox' 'jobs run|--name' 'jobs run|--timeout' 'jobs run|--shell' 'jobs run|--cwd'
            return 0
        case 'jobs run|-e' 'jobs run|--env' 'jobs run|--env-file' 'jobs run|--queue-key' 'jobs run|--profile' 'jobs run|--api-url'
            return 0
        case 'jobs list|-s' 'jobs list|--sandbox' 'jobs list|--request' 'jobs list|--status' 'jobs list|--profile' 'jobs list|--api-url'
            return 0
        case 'jobs show|-s' 'jobs show|--sandbox' 'jobs show|--profile' 'jobs show|--api-url' 'jobs logs|-s' 'jobs logs|--sandbox'
            return 0
        case 'jobs logs|--profile' 'jobs logs|--api-url' 'jobs wait|-s' 'jobs wait|--sandbox' 'jobs wait|--request' 'jobs wait|--timeout'
            return 0
        case 'jobs wait|--profile' 'jobs wait|--api-url' 'jobs cancel|-s' 'jobs cancel|--sandbox' 'jobs cancel|--profile' 'jobs cancel|--api-url'
            return 0
        case 'sandbox|--profile' 'sandbox|--api-url' 'sandbox create|--isolation' 'sandbox create|-p' 'sandbox create|--publish' 'sandbox create|-l'
            return 0
        case 'sandbox create|--label' 'sandbox create|--idle-timeout' 'sandbox create|-v' 'sandbox create|--volume' 'sandbox create|--allow-domain' 'sandbox create|--deny-domain'
            return 0
        case 'sandbox create|--allow-cidr' 'sandbox create|--egress-policy' 'sandbox create|--image' 'sandbox create|--memory' 'sandbox create|--pids' 'sandbox create|--cpus'
            return 0
        case 'sandbox create|--tmp-size' 'sandbox create|--disk' 'sandbox create|--profile' 'sandbox create|--api-url' 'sandbox list|-l' 'sandbox list|--label'
            return 0
        case 'sandbox list|--profile' 'sandbox list|--api-url' 'sandbox show|--profile' 'sandbox show|--api-url' 'sandbox stats|--profile' 'sandbox stats|--api-url'
            return 0
        case 'sandbox update|-l' 'sandbox update|--label' 'sandbox update|--idle-timeout' 'sandbox update|--memory' 'sandbox update|--pids' 'sandbox update|--cpus'
            return 0
        case 'sandbox update|--tmp-size' 'sandbox update|--disk' 'sandbox update|--allow-domain' 'sandbox update|--deny-domain' 'sandbox update|--allow-cidr' 'sandbox update|--egress-policy'
            return 0
        case 'sandbox update|--profile' 'sandbox update|--api-url' 'sandbox egress|--profile' 'sandbox egress|--api-url' 'sandbox stop|-l' 'sandbox stop|--label'
            return 0
        case 'sandbox stop|--profile' 'sandbox stop|--api-url' 'sandbox start|--profile' 'sandbox start|--api-url' 'sandbox pause|--profile' 'sandbox pause|--api-url'
            return 0
        case 'sandbox resume|--profile' 'sandbox resume|--api-url' 'sandbox rm|-l' 'sandbox rm|--label' 'sandbox rm|--profile' 'sandbox rm|--api-url'
            return 0
        case 'image|--profile' 'image|--api-url' 'image pull|--profile' 'image pull|--api-url' 'image import|--profile' 'image import|--api-url'
            return 0
        case 'image list|--profile' 'image list|--api-url' 'image rm|--profile' 'image rm|--api-url' 'volume|--profile' 'volume|--api-url'
            return 0
        case 'volume create|--size' 'volume create|--profile' 'volume create|--api-url' 'volume list|--profile' 'volume list|--api-url' 'volume show|--profile'
            return 0
        case 'volume show|--api-url' 'volume rm|--profile' 'volume rm|--api-url' 'cp|--profile' 'cp|--api-url' 'port-forward|--address'
            return 0
        case 'port-forward|--profile' 'port-forward|--api-url' 'port|--profile' 'port|--api-url' 'mcp|-s' 'mcp|--sandbox'
            return 0
        case 'mcp|--tools' 'mcp|--max-output-bytes' 'mcp|--profile' 'mcp|--api-url' 'daemon|--profile' 'daemon|--api-url'
            return 0
        case 'daemon run|--listen' 'daemon run|--faults' 'daemon run|--idle-exit' 'daemon run|--sandbox-idle-timeout' 'daemon run|--key-retention' 'daemon run|--process-log-segment'
            return 0
        case 'daemon run|--process-log-keep' 'daemon run|--execution-output-max' 'daemon run|--retain' 'daemon run|--retain-size' 'daemon run|--job-concurrency' 'daemon run|--job-output-max'
            return 0
        case 'daemon run|--driver' 'daemon run|--slurm-partition' 'daemon run|--slurm-account' 'daemon run|--slurm-shared-dir' 'daemon run|--profile' 'daemon run|--api-url'
            return 0
        case 'daemon start|--idle-exit' 'daemon start|--sandbox-idle-timeout' 'daemon start|--profile' 'daemon start|--api-url' 'daemon stop|--profile' 'daemon stop|--api-url'
            return 0
        case 'daemon status|--profile' 'daemon status|--api-url' 'init|--profile-name' 'init|--api-url' 'init|--profile' 'profile|--profile'
            return 0
        case 'profile|--api-url' 'profile add|--api-url' 'profile add|--profile' 'profile list|--profile' 'profile list|--api-url' 'profile use|--profile'
            return 0
        case 'profile use|--api-url' 'profile show|--profile' 'profile show|--api-url' 'profile rm|--profile' 'profile rm|--api-url' 'config|--profile'
            return 0
        case 'config|--api-url' 'config get|--profile' 'config get|--api-url' 'config set|--profile' 'config set|--api-url' 'completion|--profile'
            return 0
        case 'completion|--api-url' 'help|--profile' 'help|--api-url' 'version|--profile' 'version|--api-url'
            return 0
    end
    return 1
end

# Reads the command line before the cursor: the command path, the arguments after it,
# whether -- was seen, and whether the previous word is an option waiting for its value.
function __sbx_walk
    set -g __sbx_path ''
    set -g __sbx_args
    set -g __sbx_dashdash 0
    set -g __sbx_pending 0
    for word in (commandline -opc)[2..-1]
        if test $__sbx_pending = 1
            set __sbx_pending 0
        else if test $__sbx_dashdash = 1
            set -a __sbx_args $word
        else if test "$word" = --
            set __sbx_dashdash 1
        else if string match -qr -- '^--.*=' $word
            continue
        else if string match -qr -- '^-.' $word
            __sbx_takes_value "$__sbx_path" $word; and set __sbx_pending 1
        else if test (count $__sbx_args) = 0; and __sbx_subcommand "$__sbx_path" $word
            set __sbx_path $__sbx_next
        else
            set -a __sbx_args $word
        end
    end
end

# __sbx_at PATH: the command line is at PATH, before any -- (options apply).
function __sbx_at
    __sbx_walk
    test "$__sbx_path" = "$argv[1]"; and test $__sbx_dashdash = 0
end

# __sbx_arg PATH N [more]: the word being typed is argument N at PATH (or any after it, with more).
function __sbx_arg
    __sbx_walk
    test "$__sbx_path" = "$argv[1]"; and test $__sbx_pending = 0; or return 1
    if test "$argv[3]" = more
        test (count $__sbx_args) -ge $argv[2]
    else
        test (count $__sbx_args) -eq $argv[2]
    end
end

# Receipt ids from the local store: the first column of piped `receipts list`, header skipped.
# Bounded (50) and silent when sbx is missing or fails.
function __sbx_receipt_ids
    set -l rows (command sbx receipts list --limit 50 2>/dev/null </dev/null)
    string replace -r -- '\t.*' '' $rows[2..-1]
end

# What the backend knows (sandbox names, process names, job ids), given the line so far
# (its -s picks the sandbox). Never starts the daemon; silent when it cannot be asked.
function __sbx_backend_words
    command sbx __complete $argv[1] -- (commandline -opc)[2..-1] 2>/dev/null </dev/null
end

# The arguments as a command line of their own (sbx exec -- make test).
function __sbx_command_line
    __sbx_walk
    complete -C (string join ' ' -- (string escape -- $__sbx_args) (commandline -ct))
end

complete -c sbx -f

# sbx
complete -c sbx -n '__sbx_arg "" 0' -a exec -d 'run a command in a sandbox and record a receipt'
complete -c sbx -n '__sbx_arg "" 0' -a run -d 'create a sandbox, run one command in it, remove it'
complete -c sbx -n '__sbx_arg "" 0' -a shell -d 'an interactive shell in a sandbox'
complete -c sbx -n '__sbx_arg "" 0' -a attach -d 'attach this terminal to an execution on a terminal'
complete -c sbx -n '__sbx_arg "" 0' -a receipts -d 'inspect, observe and resubmit receipts'
complete -c sbx -n '__sbx_arg "" 0' -a recover -d 'observe every receipt in doubt once and say what is resolved'
complete -c sbx -n '__sbx_arg "" 0' -a logs -d 'replay or follow an execution\'s output'
complete -c sbx -n '__sbx_arg "" 0' -a cancel -d 'cancel a running execution'
complete -c sbx -n '__sbx_arg "" 0' -a process -d 'supervised background processes'
complete -c sbx -n '__sbx_arg "" 0' -a ps -d 'list supervised processes (sbx process list)'
complete -c sbx -n '__sbx_arg "" 0' -a jobs -d 'one-shot jobs with dependencies and queue keys'
complete -c sbx -n '__sbx_arg "" 0' -a sandbox -d 'manage sandboxes'
complete -c sbx -n '__sbx_arg "" 0' -a image -d 'pull, list and remove images'
complete -c sbx -n '__sbx_arg "" 0' -a volume -d 'create, list, show and remove named volumes'
complete -c sbx -n '__sbx_arg "" 0' -a cp -d 'copy files and directories into a sandbox or a volume, or out of it'
complete -c sbx -n '__sbx_arg "" 0' -a port-forward -d 'reach a port inside a sandbox from this machine'
complete -c sbx -n '__sbx_arg "" 0' -a port -d 'show a sandbox\'s published ports'
complete -c sbx -n '__sbx_arg "" 0' -a mcp -d 'serve sandboxes to an agent (Model Context Protocol, stdio)'
complete -c sbx -n '__sbx_arg "" 0' -a daemon -d 'run, start, stop and inspect the embedded backend'
complete -c sbx -n '__sbx_arg "" 0' -a init -d 'set up the backend sbx uses (interactive)'
complete -c sbx -n '__sbx_arg "" 0' -a profile -d 'manage backend profiles'
complete -c sbx -n '__sbx_arg "" 0' -a config -d 'read and change settings'
complete -c sbx -n '__sbx_arg "" 0' -a completion -d 'print a shell completion script (bash, zsh, fish)'
complete -c sbx -n '__sbx_arg "" 0' -a help -d 'help on a command or a topic (exit-codes)'
complete -c sbx -n '__sbx_arg "" 0' -a version -d 'print the version (as --version does)'
complete -c sbx -n '__sbx_at ""' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at ""' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at ""' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at ""' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at ""' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at ""' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at ""' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at ""' -s h -l help -d 'show help'

# sbx exec
complete -c sbx -n '__sbx_at "exec"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name (default: default)'
complete -c sbx -n '__sbx_at "exec"' -l shell -x -d 'run STRING through /bin/sh -c instead of argv'
complete -c sbx -n '__sbx_at "exec"' -l timeout -x -d 'server-side timeout, 1s..10m (default: 2m)'
complete -c sbx -n '__sbx_at "exec"' -l client-timeout -x -d 'local deadline for an answer (default: timeout + 30s)'
complete -c sbx -n '__sbx_at "exec"' -l cwd -x -d 'working directory inside /workspace'
complete -c sbx -n '__sbx_at "exec"' -s e -l env -x -d 'environment variable (repeatable)'
complete -c sbx -n '__sbx_at "exec"' -l env-file -r -F -d 'read K=V lines from a file'
complete -c sbx -n '__sbx_at "exec"' -l stdin -d 'send sbx\'s standard input to the command (one-shot)'
complete -c sbx -n '__sbx_at "exec"' -l idempotency-key -x -d 'use this key instead of a fresh random one'
complete -c sbx -n '__sbx_at "exec"' -l stream -d 'show output live (SSE); a dropped stream is resumed, never re-sent'
complete -c sbx -n '__sbx_at "exec"' -l detach -d 'return once the command has started; print the receipt and execution ids'
complete -c sbx -n '__sbx_at "exec"' -s i -l interactive -d 'send stdin (alone: as --stdin; with -t: keys typed at the terminal)'
complete -c sbx -n '__sbx_at "exec"' -s t -l tty -d 'run on a terminal of the sandbox\'s, attached to yours (with -i; timeout up to 24h)'
complete -c sbx -n '__sbx_at "exec"' -l detach-keys -x -d 'keys that detach from -t, leaving it running (default: ctrl-p,ctrl-q)'
complete -c sbx -n '__sbx_at "exec"' -l fail-on-truncated -d 'exit 201, not 0, when the output shown is not all of it (past the output cap)'
complete -c sbx -n '__sbx_at "exec"' -l json -d 'print the receipt as JSON and nothing else on stdout'
complete -c sbx -n '__sbx_at "exec"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "exec"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "exec"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "exec"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "exec"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "exec"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "exec"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "exec" 0 more' -a '(__sbx_command_line)'

# sbx run
complete -c sbx -n '__sbx_at "run"' -l name -x -d 'the sandbox\'s name (default: run- and 8 random letters)'
complete -c sbx -n '__sbx_at "run"' -l image -x -d 'its root is this OCI image\'s filesystem, writable (as sandbox create --image)'
complete -c sbx -n '__sbx_at "run"' -l keep -d 'keep the sandbox afterwards (say how to remove it)'
complete -c sbx -n '__sbx_at "run"' -l isolation -x -a 'auto bwrap none' -d 'auto (bwrap where it works, else none), bwrap or none'
complete -c sbx -n '__sbx_at "run"' -l network -d 'user (outbound, not the host\'s loopback), host or allow-list'
complete -c sbx -n '__sbx_at "run"' -l no-network -d 'only its own loopback (needs bwrap)'
complete -c sbx -n '__sbx_at "run"' -s p -l publish -x -d 'publish port (host port 0: any free one; repeatable)'
complete -c sbx -n '__sbx_at "run"' -s l -l label -x -d 'a label on the sandbox (repeatable)'
complete -c sbx -n '__sbx_at "run"' -s v -l volume -x -d 'mount a named volume at /path, read-only with :ro (repeatable)'
complete -c sbx -n '__sbx_at "run"' -l allow-domain -x -d 'a name it may reach: pypi.org, or *.domain for every name below (repeatable)'
complete -c sbx -n '__sbx_at "run"' -l deny-domain -x -d 'a name refused even where an allow pattern matches (repeatable)'
complete -c sbx -n '__sbx_at "run"' -l allow-cidr -x -d 'an address range it may reach, e.g. 203.0.113.0/24 (repeatable)'
complete -c sbx -n '__sbx_at "run"' -l egress-policy -x -d 'a JSON file {allow_domains, deny_domains, allow_cidrs}'
complete -c sbx -n '__sbx_at "run"' -l memory -x -d 'memory of all its commands together, e.g. 512m, 4g; none: no limit'
complete -c sbx -n '__sbx_at "run"' -l pids -x -d 'processes (and threads) at once; a fork past it fails'
complete -c sbx -n '__sbx_at "run"' -l cpus -x -d 'CPU time as a number of cores, e.g. 0.5, 2; none: no limit'
complete -c sbx -n '__sbx_at "run"' -l tmp-size -x -d 'size of /tmp, /var/tmp and /dev/shm (each a tmpfs): a write past it fails with ENOSPC'
complete -c sbx -n '__sbx_at "run"' -l disk -x -d 'workspace disk: a file system of its own (create only; root)'
complete -c sbx -n '__sbx_at "run"' -l shell -x -d 'run STRING through /bin/sh -c instead of argv'
complete -c sbx -n '__sbx_at "run"' -l timeout -x -d 'server-side timeout, 1s..10m (default: 2m)'
complete -c sbx -n '__sbx_at "run"' -l client-timeout -x -d 'local deadline for an answer (default: timeout + 30s)'
complete -c sbx -n '__sbx_at "run"' -l cwd -x -d 'working directory (default: the image\'s WorkingDir, else /workspace)'
complete -c sbx -n '__sbx_at "run"' -s e -l env -x -d 'environment variable (repeatable)'
complete -c sbx -n '__sbx_at "run"' -l env-file -r -F -d 'read K=V lines from a file'
complete -c sbx -n '__sbx_at "run"' -s i -l stdin -d 'send sbx\'s standard input to the command (one-shot)'
complete -c sbx -n '__sbx_at "run"' -l stream -d 'show output live (SSE)'
complete -c sbx -n '__sbx_at "run"' -l fail-on-truncated -d 'exit 201, not 0, when the output shown is not all of it'
complete -c sbx -n '__sbx_at "run"' -l json -d 'print the receipt as JSON and nothing else on stdout'
complete -c sbx -n '__sbx_at "run"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "run"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "run"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "run"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "run"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "run"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "run"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "run" 0 more' -a '(__sbx_command_line)'

# sbx shell
complete -c sbx -n '__sbx_at "shell"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name (default: default)'
complete -c sbx -n '__sbx_at "shell"' -l cwd -x -d 'working directory inside /workspace'
complete -c sbx -n '__sbx_at "shell"' -s e -l env -x -d 'environment variable (repeatable)'
complete -c sbx -n '__sbx_at "shell"' -l timeout -x -d 'end it after this long, 1s..24h (default: 24h)'
complete -c sbx -n '__sbx_at "shell"' -l detach-keys -x -d 'keys that detach, leaving it running (default: ctrl-p,ctrl-q)'
complete -c sbx -n '__sbx_at "shell"' -l idempotency-key -x -d 'use this key instead of a fresh random one'
complete -c sbx -n '__sbx_at "shell"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "shell"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "shell"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "shell"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "shell"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "shell"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "shell"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "shell"' -s h -l help -d 'show help'

# sbx attach
complete -c sbx -n '__sbx_at "attach"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox of a bare execution id (default: default)'
complete -c sbx -n '__sbx_at "attach"' -l replay -d 'show the whole transcript first'
complete -c sbx -n '__sbx_at "attach"' -l detach-keys -x -d 'keys that detach, leaving it running (default: ctrl-p,ctrl-q)'
complete -c sbx -n '__sbx_at "attach"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "attach"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "attach"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "attach"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "attach"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "attach"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "attach"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "attach"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "attach" 0' -a '(__sbx_receipt_ids)' -d 'execution id, or a receipt (id, key, unique prefix)'

# sbx receipts
complete -c sbx -n '__sbx_arg "receipts" 0' -a list -d 'list receipts, newest first'
complete -c sbx -n '__sbx_arg "receipts" 0' -a show -d 'show one receipt with its attempts and observations'
complete -c sbx -n '__sbx_arg "receipts" 0' -a wait -d 'observe a receipt\'s execution until it is settled'
complete -c sbx -n '__sbx_arg "receipts" 0' -a refresh -d 'observe the execution behind a receipt once'
complete -c sbx -n '__sbx_arg "receipts" 0' -a resubmit -d 'send a receipt\'s request again, with the original key and bytes'
complete -c sbx -n '__sbx_arg "receipts" 0' -a export -d 'print receipts as JSON Lines, or write a signed bundle'
complete -c sbx -n '__sbx_arg "receipts" 0' -a prune -d 'delete receipts created before a time'
complete -c sbx -n '__sbx_arg "receipts" 0' -a verify -d 'check that the receipt history is intact'
complete -c sbx -n '__sbx_arg "receipts" 0' -a key -d 'show the public key that signs this store\'s bundles'
complete -c sbx -n '__sbx_arg "receipts" 0' -a timeline -d 'draw receipts against time, or write them as an HTML page'
complete -c sbx -n '__sbx_at "receipts"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "receipts"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "receipts"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "receipts"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "receipts"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "receipts"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "receipts"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "receipts"' -s h -l help -d 'show help'

# sbx receipts list
complete -c sbx -n '__sbx_at "receipts list"' -l classification -x -a 'succeeded admitted failed timed_out cancelled outcome_unknown result_unconfirmed in_progress record_pending running not_started rejected local_timeout dispatched' -d 'only these classifications (comma-separated)'
complete -c sbx -n '__sbx_at "receipts list"' -l limit -x -d 'at most N receipts (default: 20)'
complete -c sbx -n '__sbx_at "receipts list"' -l json -d 'print a JSON array of receipt documents'
complete -c sbx -n '__sbx_at "receipts list"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "receipts list"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "receipts list"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "receipts list"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "receipts list"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "receipts list"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "receipts list"' -s h -l help -d 'show help'

# sbx receipts show
complete -c sbx -n '__sbx_at "receipts show"' -l json -d 'print the receipt document with attempts and observations'
complete -c sbx -n '__sbx_at "receipts show"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "receipts show"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "receipts show"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "receipts show"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "receipts show"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "receipts show"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "receipts show"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "receipts show" 0' -a '(__sbx_receipt_ids)' -d 'receipt id, execution id, idempotency key, or a unique prefix'

# sbx receipts wait
complete -c sbx -n '__sbx_at "receipts wait"' -l timeout -x -d 'give up waiting after this long (default: 15m)'
complete -c sbx -n '__sbx_at "receipts wait"' -l json -d 'print the receipt document'
complete -c sbx -n '__sbx_at "receipts wait"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "receipts wait"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "receipts wait"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "receipts wait"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "receipts wait"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "receipts wait"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "receipts wait"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "receipts wait" 0' -a '(__sbx_receipt_ids)' -d 'receipt id, execution id, idempotency key, or a unique prefix'

# sbx receipts refresh
complete -c sbx -n '__sbx_at "receipts refresh"' -l json -d 'print the receipt document'
complete -c sbx -n '__sbx_at "receipts refresh"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "receipts refresh"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "receipts refresh"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "receipts refresh"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "receipts refresh"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "receipts refresh"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "receipts refresh"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "receipts refresh" 0' -a '(__sbx_receipt_ids)' -d 'receipt id, execution id, idempotency key, or a unique prefix'

# sbx receipts resubmit
complete -c sbx -n '__sbx_at "receipts resubmit"' -l client-timeout -x -d 'local deadline for an answer (default: the stored timeout + 30s)'
complete -c sbx -n '__sbx_at "receipts resubmit"' -l force -d 'send it even when its result is already known'
complete -c sbx -n '__sbx_at "receipts resubmit"' -l json -d 'print the receipt document'
complete -c sbx -n '__sbx_at "receipts resubmit"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "receipts resubmit"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "receipts resubmit"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "receipts resubmit"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "receipts resubmit"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "receipts resubmit"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "receipts resubmit"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "receipts resubmit" 0' -a '(__sbx_receipt_ids)' -d 'receipt id, execution id, idempotency key, or a unique prefix'

# sbx receipts export
complete -c sbx -n '__sbx_at "receipts export"' -l since -x -d 'only receipts created at or after TIME (ISO-8601, or a duration ago like 7d)'
complete -c sbx -n '__sbx_at "receipts export"' -l bundle -r -F -d 'write a signed bundle to FILE (- for stdout)'
complete -c sbx -n '__sbx_at "receipts export"' -l json -d 'with --bundle: describe what was written, as JSON'
complete -c sbx -n '__sbx_at "receipts export"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "receipts export"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "receipts export"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "receipts export"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "receipts export"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "receipts export"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "receipts export"' -s h -l help -d 'show help'

# sbx receipts prune
complete -c sbx -n '__sbx_at "receipts prune"' -l before -x -d 'ISO-8601 time, or a duration ago like 30d'
complete -c sbx -n '__sbx_at "receipts prune"' -l include-in-doubt -d 'also delete receipts that are still in doubt'
complete -c sbx -n '__sbx_at "receipts prune"' -l json -d 'print {deleted, before, kept_in_doubt}'
complete -c sbx -n '__sbx_at "receipts prune"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "receipts prune"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "receipts prune"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "receipts prune"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "receipts prune"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "receipts prune"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "receipts prune"' -s h -l help -d 'show help'

# sbx receipts verify
complete -c sbx -n '__sbx_at "receipts verify"' -l bundle -r -F -d 'verify a bundle from `receipts export --bundle` instead (no store needed)'
complete -c sbx -n '__sbx_at "receipts verify"' -l key -x -d 'with --bundle: the signer\'s public key (`sbx receipts key`), or a file holding it'
complete -c sbx -n '__sbx_at "receipts verify"' -l json -d 'print the report as JSON'
complete -c sbx -n '__sbx_at "receipts verify"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "receipts verify"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "receipts verify"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "receipts verify"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "receipts verify"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "receipts verify"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "receipts verify"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "receipts verify" 0 more' -a '(__sbx_receipt_ids)' -d 'only these receipts (id, execution id, idempotency key, or a unique prefix)'

# sbx receipts key
complete -c sbx -n '__sbx_at "receipts key"' -l pem -d 'print it as a PEM public key (for openssl)'
complete -c sbx -n '__sbx_at "receipts key"' -l json -d 'print {algorithm, public_key, fingerprint, file, pem}'
complete -c sbx -n '__sbx_at "receipts key"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "receipts key"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "receipts key"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "receipts key"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "receipts key"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "receipts key"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "receipts key"' -s h -l help -d 'show help'

# sbx receipts timeline
complete -c sbx -n '__sbx_at "receipts timeline"' -l since -x -d 'receipts created at or after TIME (ISO-8601, or a duration ago; default: 24h)'
complete -c sbx -n '__sbx_at "receipts timeline"' -l limit -x -d 'at most the newest N receipts (default: 200)'
complete -c sbx -n '__sbx_at "receipts timeline"' -l html -r -F -d 'write the timeline as one HTML page to FILE'
complete -c sbx -n '__sbx_at "receipts timeline"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "receipts timeline"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "receipts timeline"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "receipts timeline"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "receipts timeline"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "receipts timeline"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "receipts timeline"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "receipts timeline"' -s h -l help -d 'show help'

# sbx recover
complete -c sbx -n '__sbx_at "recover"' -l json -d 'print {resolved: [...], running: [...], in_doubt: [...]}'
complete -c sbx -n '__sbx_at "recover"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "recover"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "recover"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "recover"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "recover"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "recover"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "recover"' -s h -l help -d 'show help'

# sbx logs
complete -c sbx -n '__sbx_at "logs"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox of a bare execution id (default: default)'
complete -c sbx -n '__sbx_at "logs"' -s f -l follow -d 'follow until the execution ends'
complete -c sbx -n '__sbx_at "logs"' -l after -x -d 'start after this event id'
complete -c sbx -n '__sbx_at "logs"' -l json -d 'print events as JSON Lines: {id, type, data}'
complete -c sbx -n '__sbx_at "logs"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "logs"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "logs"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "logs"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "logs"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "logs"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "logs"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "logs" 0' -a '(__sbx_receipt_ids)' -d 'execution id, or a receipt (id, key, unique prefix)'

# sbx cancel
complete -c sbx -n '__sbx_at "cancel"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox of a bare execution id (default: default)'
complete -c sbx -n '__sbx_at "cancel"' -l reason -x -d 'why, recorded by the backend'
complete -c sbx -n '__sbx_at "cancel"' -l wait -d 'wait until the execution has really ended'
complete -c sbx -n '__sbx_at "cancel"' -l timeout -x -d 'how long --wait waits (default: 60s)'
complete -c sbx -n '__sbx_at "cancel"' -l json -d 'print {execution_id, receipt_id, cancel, state, outcome, exit_code, signal}'
complete -c sbx -n '__sbx_at "cancel"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "cancel"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "cancel"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "cancel"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "cancel"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "cancel"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "cancel"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "cancel" 0' -a '(__sbx_receipt_ids)' -d 'execution id, or a receipt (id, key, unique prefix)'

# sbx process
complete -c sbx -n '__sbx_arg "process" 0' -a start -d 'start a supervised background process'
complete -c sbx -n '__sbx_arg "process" 0' -a list -d 'list supervised processes'
complete -c sbx -n '__sbx_arg "process" 0' -a show -d 'show a process\'s state'
complete -c sbx -n '__sbx_arg "process" 0' -a logs -d 'read a process\'s output by offset (-f to follow)'
complete -c sbx -n '__sbx_arg "process" 0' -a result -d 'a process\'s outcome, exit code and output tails'
complete -c sbx -n '__sbx_arg "process" 0' -a stdin -d 'send bytes to a process\'s stdin'
complete -c sbx -n '__sbx_arg "process" 0' -a attach -d 'attach this terminal to a process started with --tty'
complete -c sbx -n '__sbx_arg "process" 0' -a signal -d 'send a signal to a process\'s group'
complete -c sbx -n '__sbx_arg "process" 0' -a stop -d 'stop a process: TERM, grace, KILL to its group'
complete -c sbx -n '__sbx_arg "process" 0' -a rm -d 'stop (if running) and remove a process'
complete -c sbx -n '__sbx_at "process"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "process"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "process"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "process"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "process"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "process"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "process"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "process"' -s h -l help -d 'show help'

# sbx process start
complete -c sbx -n '__sbx_at "process start"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name (default: default)'
complete -c sbx -n '__sbx_at "process start"' -l name -x -d 'a name to refer to it by (one process\'s until it exits: another start with it is refused)'
complete -c sbx -n '__sbx_at "process start"' -l shell -x -d 'run STRING through /bin/sh -c instead of argv'
complete -c sbx -n '__sbx_at "process start"' -l stdin -d 'give it a stdin pipe to write to later (sbx process stdin)'
complete -c sbx -n '__sbx_at "process start"' -l tty -d 'each run on a terminal of the sandbox\'s (attach: sbx process attach; implies --stdin)'
complete -c sbx -n '__sbx_at "process start"' -l restart -x -a 'never on-failure always' -d 'never, on-failure or always (default: never)'
complete -c sbx -n '__sbx_at "process start"' -l max-restarts -x -d 'restarts allowed before it stays exited (default: 5)'
complete -c sbx -n '__sbx_at "process start"' -l backoff -x -d 'first back-off, doubling per restart (default: 1s)'
complete -c sbx -n '__sbx_at "process start"' -l max-backoff -x -d 'longest back-off (default: 30s)'
complete -c sbx -n '__sbx_at "process start"' -l timeout -x -d 'limit on its whole life, up to 24h (default: none)'
complete -c sbx -n '__sbx_at "process start"' -l cwd -x -d 'working directory inside /workspace'
complete -c sbx -n '__sbx_at "process start"' -s e -l env -x -d 'environment variable (repeatable)'
complete -c sbx -n '__sbx_at "process start"' -l env-file -r -F -d 'read K=V lines from a file'
complete -c sbx -n '__sbx_at "process start"' -l idempotency-key -x -d 'use this key instead of a fresh random one'
complete -c sbx -n '__sbx_at "process start"' -l json -d 'print the receipt (process_id: the process started)'
complete -c sbx -n '__sbx_at "process start"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "process start"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "process start"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "process start"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "process start"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "process start"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "process start"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "process start" 0 more' -a '(__sbx_command_line)'

# sbx process list
complete -c sbx -n '__sbx_at "process list"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name (default: default)'
complete -c sbx -n '__sbx_at "process list"' -s A -l all-sandboxes -d 'every sandbox\'s processes, with a SANDBOX column (`sandbox` in --json)'
complete -c sbx -n '__sbx_at "process list"' -l json -d 'print {processes: [...]}'
complete -c sbx -n '__sbx_at "process list"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "process list"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "process list"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "process list"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "process list"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "process list"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "process list"' -s h -l help -d 'show help'

# sbx process show
complete -c sbx -n '__sbx_at "process show"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox (default: default)'
complete -c sbx -n '__sbx_at "process show"' -l json -d 'print the process record'
complete -c sbx -n '__sbx_at "process show"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "process show"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "process show"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "process show"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "process show"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "process show"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "process show"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "process show" 0' -a '(__sbx_backend_words process-name)' -d 'process id (prc_…), name, or the receipt of its start'

# sbx process logs
complete -c sbx -n '__sbx_at "process logs"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox (default: default)'
complete -c sbx -n '__sbx_at "process logs"' -l stream -x -a 'stdout stderr' -d 'only stdout or only stderr (default: both)'
complete -c sbx -n '__sbx_at "process logs"' -l offset -x -d 'start at this logical byte offset (default: 0)'
complete -c sbx -n '__sbx_at "process logs"' -l limit -x -d 'read at most N bytes'
complete -c sbx -n '__sbx_at "process logs"' -s f -l follow -d 'follow until the process ends'
complete -c sbx -n '__sbx_at "process logs"' -l text -d 'decode as UTF-8 text'
complete -c sbx -n '__sbx_at "process logs"' -l raw -d 'raw bytes, even on a terminal'
complete -c sbx -n '__sbx_at "process logs"' -l json -d 'one JSON document per read (JSON Lines)'
complete -c sbx -n '__sbx_at "process logs"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "process logs"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "process logs"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "process logs"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "process logs"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "process logs"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "process logs"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "process logs" 0' -a '(__sbx_backend_words process-name)' -d 'process id (prc_…), name, or the receipt of its start'

# sbx process result
complete -c sbx -n '__sbx_at "process result"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox (default: default)'
complete -c sbx -n '__sbx_at "process result"' -l wait -x -d 'wait up to DUR for the process to complete'
complete -c sbx -n '__sbx_at "process result"' -l json -d 'print the result document'
complete -c sbx -n '__sbx_at "process result"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "process result"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "process result"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "process result"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "process result"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "process result"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "process result"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "process result" 0' -a '(__sbx_backend_words process-name)' -d 'process id (prc_…), name, or the receipt of its start'

# sbx process stdin
complete -c sbx -n '__sbx_at "process stdin"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox (default: default)'
complete -c sbx -n '__sbx_at "process stdin"' -l file -r -F -d 'send this file instead of stdin'
complete -c sbx -n '__sbx_at "process stdin"' -l eof -d 'close the process\'s stdin after these bytes'
complete -c sbx -n '__sbx_at "process stdin"' -l run -x -d 'act only if run N is current (also PROCESS@N)'
complete -c sbx -n '__sbx_at "process stdin"' -l json -d 'print {process_id, generation, bytes_written, eof}'
complete -c sbx -n '__sbx_at "process stdin"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "process stdin"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "process stdin"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "process stdin"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "process stdin"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "process stdin"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "process stdin"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "process stdin" 0' -a '(__sbx_backend_words process-name)' -d 'process id (prc_…), name, or the receipt of its start'

# sbx process attach
complete -c sbx -n '__sbx_at "process attach"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox (default: default)'
complete -c sbx -n '__sbx_at "process attach"' -l replay -d 'show what is kept of the transcript first'
complete -c sbx -n '__sbx_at "process attach"' -l detach-keys -x -d 'keys that detach, leaving it running (default: ctrl-p,ctrl-q)'
complete -c sbx -n '__sbx_at "process attach"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "process attach"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "process attach"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "process attach"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "process attach"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "process attach"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "process attach"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "process attach"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "process attach" 0' -a '(__sbx_backend_words process-name)' -d 'process id (prc_…), name, or the receipt of its start'

# sbx process signal
complete -c sbx -n '__sbx_at "process signal"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox (default: default)'
complete -c sbx -n '__sbx_at "process signal"' -l run -x -d 'act only if run N is current (also PROCESS@N)'
complete -c sbx -n '__sbx_at "process signal"' -l json -d 'print the acknowledgement'
complete -c sbx -n '__sbx_at "process signal"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "process signal"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "process signal"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "process signal"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "process signal"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "process signal"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "process signal"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "process signal" 0' -a '(__sbx_backend_words process-name)' -d 'process id (prc_…), name, or the receipt of its start'
complete -c sbx -n '__sbx_arg "process signal" 1' -a 'TERM INT HUP KILL USR1 USR2' -d 'TERM, INT, HUP, KILL, USR1 or USR2'

# sbx process stop
complete -c sbx -n '__sbx_at "process stop"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox (default: default)'
complete -c sbx -n '__sbx_at "process stop"' -l grace -x -d 'time between TERM and KILL, up to 60s (default: 5s)'
complete -c sbx -n '__sbx_at "process stop"' -l run -x -d 'act only if run N is current (also PROCESS@N)'
complete -c sbx -n '__sbx_at "process stop"' -l json -d 'print the process record afterwards'
complete -c sbx -n '__sbx_at "process stop"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "process stop"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "process stop"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "process stop"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "process stop"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "process stop"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "process stop"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "process stop" 0' -a '(__sbx_backend_words process-name)' -d 'process id (prc_…), name, or the receipt of its start'

# sbx process rm
complete -c sbx -n '__sbx_at "process rm"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox (default: default)'
complete -c sbx -n '__sbx_at "process rm"' -l grace -x -d 'time between TERM and KILL, up to 60s (default: 5s)'
complete -c sbx -n '__sbx_at "process rm"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "process rm"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "process rm"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "process rm"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "process rm"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "process rm"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "process rm"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "process rm"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "process rm" 0' -a '(__sbx_backend_words process-name)' -d 'process id (prc_…), name, or the receipt of its start'

# sbx ps
complete -c sbx -n '__sbx_at "ps"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name (default: default)'
complete -c sbx -n '__sbx_at "ps"' -s A -l all-sandboxes -d 'every sandbox\'s processes, with a SANDBOX column (`sandbox` in --json)'
complete -c sbx -n '__sbx_at "ps"' -l json -d 'print {processes: [...]}'
complete -c sbx -n '__sbx_at "ps"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "ps"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "ps"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "ps"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "ps"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "ps"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "ps"' -s h -l help -d 'show help'

# sbx jobs
complete -c sbx -n '__sbx_arg "jobs" 0' -a submit -d 'submit a file of jobs with dependencies'
complete -c sbx -n '__sbx_arg "jobs" 0' -a run -d 'run one command as a job and wait for it, like exec'
complete -c sbx -n '__sbx_arg "jobs" 0' -a list -d 'list jobs (by request, by status)'
complete -c sbx -n '__sbx_arg "jobs" 0' -a show -d 'show a job'
complete -c sbx -n '__sbx_arg "jobs" 0' -a logs -d 'print a job\'s output (-f to follow)'
complete -c sbx -n '__sbx_arg "jobs" 0' -a wait -d 'wait for jobs to end'
complete -c sbx -n '__sbx_arg "jobs" 0' -a cancel -d 'cancel a job (and what depends on it)'
complete -c sbx -n '__sbx_at "jobs"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "jobs"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "jobs"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "jobs"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "jobs"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "jobs"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "jobs"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "jobs"' -s h -l help -d 'show help'

# sbx jobs submit
complete -c sbx -n '__sbx_at "jobs submit"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name (default: default)'
complete -c sbx -n '__sbx_at "jobs submit"' -l wait -d 'wait until every job has ended; exit with what they did'
complete -c sbx -n '__sbx_at "jobs submit"' -l timeout -x -d 'with --wait: stop waiting after this long (default: 1h; exit 124, nothing cancelled)'
complete -c sbx -n '__sbx_at "jobs submit"' -l json -d 'print {receipt_id, request_id, sandbox_id, classification, error, jobs, waited, timed_out, exit}'
complete -c sbx -n '__sbx_at "jobs submit"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "jobs submit"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "jobs submit"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "jobs submit"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "jobs submit"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "jobs submit"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "jobs submit"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "jobs submit" 0' -F -d 'a JSON file of jobs, or - for stdin'

# sbx jobs run
complete -c sbx -n '__sbx_at "jobs run"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name (default: default)'
complete -c sbx -n '__sbx_at "jobs run"' -l name -x -d 'the job\'s name (default: run)'
complete -c sbx -n '__sbx_at "jobs run"' -l timeout -x -d 'server-side timeout, 1s..1h (default: 30m)'
complete -c sbx -n '__sbx_at "jobs run"' -l shell -x -d 'run STRING through /bin/sh -c instead of argv'
complete -c sbx -n '__sbx_at "jobs run"' -l cwd -x -d 'working directory inside /workspace'
complete -c sbx -n '__sbx_at "jobs run"' -s e -l env -x -d 'environment variable (repeatable)'
complete -c sbx -n '__sbx_at "jobs run"' -l env-file -r -F -d 'read K=V lines from a file'
complete -c sbx -n '__sbx_at "jobs run"' -l queue-key -x -d 'run one at a time with other jobs of this key'
complete -c sbx -n '__sbx_at "jobs run"' -l json -d 'print the submission document with the job\'s output (stdout, stderr)'
complete -c sbx -n '__sbx_at "jobs run"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "jobs run"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "jobs run"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "jobs run"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "jobs run"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "jobs run"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "jobs run"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "jobs run" 0 more' -a '(__sbx_command_line)'

# sbx jobs list
complete -c sbx -n '__sbx_at "jobs list"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name (default: default)'
complete -c sbx -n '__sbx_at "jobs list"' -s A -l all-sandboxes -d 'every sandbox\'s jobs, with a SANDBOX column (`sandbox` in --json)'
complete -c sbx -n '__sbx_at "jobs list"' -l request -x -d 'only the jobs of this request id'
complete -c sbx -n '__sbx_at "jobs list"' -l status -x -a 'queued waiting running cancel_requested succeeded failed cancelled timed_out dependency_failed interrupted lost' -d 'only jobs with this status'
complete -c sbx -n '__sbx_at "jobs list"' -l json -d 'print {jobs: [...]} as the API lists them'
complete -c sbx -n '__sbx_at "jobs list"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "jobs list"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "jobs list"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "jobs list"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "jobs list"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "jobs list"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "jobs list"' -s h -l help -d 'show help'

# sbx jobs show
complete -c sbx -n '__sbx_at "jobs show"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name (default: default)'
complete -c sbx -n '__sbx_at "jobs show"' -l json -d 'print the job record with all of its output chunks'
complete -c sbx -n '__sbx_at "jobs show"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "jobs show"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "jobs show"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "jobs show"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "jobs show"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "jobs show"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "jobs show"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "jobs show" 0' -a '(__sbx_backend_words job-id)' -d 'job id'

# sbx jobs logs
complete -c sbx -n '__sbx_at "jobs logs"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name (default: default)'
complete -c sbx -n '__sbx_at "jobs logs"' -s f -l follow -d 'follow until the job has ended'
complete -c sbx -n '__sbx_at "jobs logs"' -l json -d 'one JSON document per output chunk (JSON Lines)'
complete -c sbx -n '__sbx_at "jobs logs"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "jobs logs"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "jobs logs"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "jobs logs"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "jobs logs"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "jobs logs"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "jobs logs"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "jobs logs" 0' -a '(__sbx_backend_words job-id)' -d 'job id'

# sbx jobs wait
complete -c sbx -n '__sbx_at "jobs wait"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name (default: default)'
complete -c sbx -n '__sbx_at "jobs wait"' -l request -x -d 'every job of this request id'
complete -c sbx -n '__sbx_at "jobs wait"' -l timeout -x -d 'stop waiting after this long (default: 1h; exit 124, the jobs keep running)'
complete -c sbx -n '__sbx_at "jobs wait"' -l json -d 'print {jobs: [...], timed_out, exit}'
complete -c sbx -n '__sbx_at "jobs wait"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "jobs wait"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "jobs wait"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "jobs wait"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "jobs wait"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "jobs wait"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "jobs wait"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "jobs wait" 0 more' -a '(__sbx_backend_words job-id)' -d 'job ids'

# sbx jobs cancel
complete -c sbx -n '__sbx_at "jobs cancel"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name (default: default)'
complete -c sbx -n '__sbx_at "jobs cancel"' -l dependents -d 'also cancel every job that depends on it, directly or not'
complete -c sbx -n '__sbx_at "jobs cancel"' -l json -d 'print {job_id, status, dependents: [{job_id, name, status}]}'
complete -c sbx -n '__sbx_at "jobs cancel"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "jobs cancel"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "jobs cancel"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "jobs cancel"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "jobs cancel"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "jobs cancel"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "jobs cancel"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "jobs cancel" 0' -a '(__sbx_backend_words job-id)' -d 'job id'

# sbx sandbox
complete -c sbx -n '__sbx_arg "sandbox" 0' -a create -d 'create a sandbox'
complete -c sbx -n '__sbx_arg "sandbox" 0' -a list -d 'list sandboxes'
complete -c sbx -n '__sbx_arg "sandbox" 0' -a ls -d 'list sandboxes (alias of list)'
complete -c sbx -n '__sbx_arg "sandbox" 0' -a show -d 'show one sandbox: isolation, network, workspace and its size'
complete -c sbx -n '__sbx_arg "sandbox" 0' -a stats -d 'what sandboxes use now: CPU, memory, processes, /tmp, workspace, network'
complete -c sbx -n '__sbx_arg "sandbox" 0' -a update -d 'change a sandbox\'s limits, labels or egress policy'
complete -c sbx -n '__sbx_arg "sandbox" 0' -a egress -d 'list a sandbox\'s connections through its egress proxy'
complete -c sbx -n '__sbx_arg "sandbox" 0' -a stop -d 'end a sandbox\'s environment and everything in it'
complete -c sbx -n '__sbx_arg "sandbox" 0' -a start -d 'start a sandbox\'s environment now'
complete -c sbx -n '__sbx_arg "sandbox" 0' -a pause -d 'freeze every process of a sandbox'
complete -c sbx -n '__sbx_arg "sandbox" 0' -a resume -d 'thaw a paused sandbox'
complete -c sbx -n '__sbx_arg "sandbox" 0' -a rm -d 'remove a sandbox and its workspace'
complete -c sbx -n '__sbx_at "sandbox"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "sandbox"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "sandbox"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "sandbox"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "sandbox"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "sandbox"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "sandbox"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "sandbox"' -s h -l help -d 'show help'

# sbx sandbox create
complete -c sbx -n '__sbx_at "sandbox create"' -l isolation -x -a 'auto bwrap none' -d 'auto (bwrap where it works, else none), bwrap or none'
complete -c sbx -n '__sbx_at "sandbox create"' -l network -d 'user (the default: outbound, not the host\'s loopback), host or allow-list'
complete -c sbx -n '__sbx_at "sandbox create"' -l no-network -d 'only its own loopback (needs bwrap)'
complete -c sbx -n '__sbx_at "sandbox create"' -s p -l publish -x -d 'publish port (host port 0: any free one; repeatable)'
complete -c sbx -n '__sbx_at "sandbox create"' -s l -l label -x -d 'a label to select it by (repeatable; key [prefix/]name)'
complete -c sbx -n '__sbx_at "sandbox create"' -l idle-timeout -x -d 'stop its environment after this long with nothing running (1s and up; 0/off: never; default: the daemon\'s)'
complete -c sbx -n '__sbx_at "sandbox create"' -s v -l volume -x -d 'mount a named volume (sbx volume create) at /path, read-only with :ro (repeatable)'
complete -c sbx -n '__sbx_at "sandbox create"' -l allow-domain -x -d 'a name it may reach: pypi.org, or *.domain for every name below (repeatable)'
complete -c sbx -n '__sbx_at "sandbox create"' -l deny-domain -x -d 'a name refused even where an allow pattern matches (repeatable)'
complete -c sbx -n '__sbx_at "sandbox create"' -l allow-cidr -x -d 'an address range it may reach, e.g. 203.0.113.0/24 (repeatable)'
complete -c sbx -n '__sbx_at "sandbox create"' -l egress-policy -x -d 'a JSON file {allow_domains, deny_domains, allow_cidrs}'
complete -c sbx -n '__sbx_at "sandbox create"' -l image -x -d 'its root is this OCI image\'s filesystem, writable (oci:DIR[:TAG], oci-archive:FILE[:TAG] or a registry reference)'
complete -c sbx -n '__sbx_at "sandbox create"' -l memory -x -d 'memory of all its commands together, e.g. 512m, 4g; none: no limit'
complete -c sbx -n '__sbx_at "sandbox create"' -l pids -x -d 'processes (and threads) at once; a fork past it fails'
complete -c sbx -n '__sbx_at "sandbox create"' -l cpus -x -d 'CPU time as a number of cores, e.g. 0.5, 2; none: no limit'
complete -c sbx -n '__sbx_at "sandbox create"' -l tmp-size -x -d 'size of /tmp, /var/tmp and /dev/shm (each a tmpfs): a write past it fails with ENOSPC'
complete -c sbx -n '__sbx_at "sandbox create"' -l disk -x -d 'workspace disk: a file system of its own (create only; root)'
complete -c sbx -n '__sbx_at "sandbox create"' -l json -d 'print the sandbox as JSON'
complete -c sbx -n '__sbx_at "sandbox create"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "sandbox create"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "sandbox create"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "sandbox create"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "sandbox create"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "sandbox create"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "sandbox create"' -s h -l help -d 'show help'

# sbx sandbox list
complete -c sbx -n '__sbx_at "sandbox list"' -s l -l label -x -d 'only sandboxes with this label (k=v, k!=v, k, !k; repeatable: all must hold)'
complete -c sbx -n '__sbx_at "sandbox list"' -l show-labels -d 'a LABELS column'
complete -c sbx -n '__sbx_at "sandbox list"' -l json -d 'print {sandboxes: [...]}'
complete -c sbx -n '__sbx_at "sandbox list"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "sandbox list"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "sandbox list"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "sandbox list"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "sandbox list"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "sandbox list"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "sandbox list"' -s h -l help -d 'show help'

# sbx sandbox show
complete -c sbx -n '__sbx_at "sandbox show"' -l json -d 'print the sandbox as JSON'
complete -c sbx -n '__sbx_at "sandbox show"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "sandbox show"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "sandbox show"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "sandbox show"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "sandbox show"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "sandbox show"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "sandbox show"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "sandbox show" 0' -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name'

# sbx sandbox stats
complete -c sbx -n '__sbx_at "sandbox stats"' -s f -l follow -d 'refresh every second (JSON Lines with --json)'
complete -c sbx -n '__sbx_at "sandbox stats"' -l json -d 'print one JSON document (JSON Lines with -f)'
complete -c sbx -n '__sbx_at "sandbox stats"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "sandbox stats"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "sandbox stats"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "sandbox stats"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "sandbox stats"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "sandbox stats"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "sandbox stats"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "sandbox stats" 0 more' -a '(__sbx_backend_words sandbox-name)' -d 'sandbox ids or names'

# sbx sandbox update
complete -c sbx -n '__sbx_at "sandbox update"' -s l -l label -x -d 'set a label, or remove it with key- (repeatable)'
complete -c sbx -n '__sbx_at "sandbox update"' -l idle-timeout -x -d 'stop its environment after this long idle (0/off: never; default: the daemon\'s)'
complete -c sbx -n '__sbx_at "sandbox update"' -l memory -x -d 'memory of all its commands together, e.g. 512m, 4g; none: no limit'
complete -c sbx -n '__sbx_at "sandbox update"' -l pids -x -d 'processes (and threads) at once; a fork past it fails'
complete -c sbx -n '__sbx_at "sandbox update"' -l cpus -x -d 'CPU time as a number of cores, e.g. 0.5, 2; none: no limit'
complete -c sbx -n '__sbx_at "sandbox update"' -l tmp-size -x -d 'size of /tmp, /var/tmp and /dev/shm (each a tmpfs): a write past it fails with ENOSPC'
complete -c sbx -n '__sbx_at "sandbox update"' -l disk -x -d 'workspace disk: a file system of its own (create only; root)'
complete -c sbx -n '__sbx_at "sandbox update"' -l allow-domain -x -d 'a name it may reach too: pypi.org, or *.domain for every name below (repeatable)'
complete -c sbx -n '__sbx_at "sandbox update"' -l deny-domain -x -d 'a name refused even where an allow pattern matches (repeatable)'
complete -c sbx -n '__sbx_at "sandbox update"' -l allow-cidr -x -d 'an address range it may reach too, e.g. 203.0.113.0/24 (repeatable)'
complete -c sbx -n '__sbx_at "sandbox update"' -l egress-policy -x -d 'a JSON file {allow_domains, deny_domains, allow_cidrs}'
complete -c sbx -n '__sbx_at "sandbox update"' -l json -d 'print the sandbox as JSON'
complete -c sbx -n '__sbx_at "sandbox update"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "sandbox update"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "sandbox update"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "sandbox update"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "sandbox update"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "sandbox update"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "sandbox update"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "sandbox update" 0' -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name'

# sbx sandbox egress
complete -c sbx -n '__sbx_at "sandbox egress"' -s f -l follow -d 'then print each connection as it is decided and as it ends (JSON Lines with --json)'
complete -c sbx -n '__sbx_at "sandbox egress"' -l json -d 'print {sandbox_id, name, egress, allowed_total, denied_total, seq, connections}'
complete -c sbx -n '__sbx_at "sandbox egress"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "sandbox egress"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "sandbox egress"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "sandbox egress"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "sandbox egress"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "sandbox egress"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "sandbox egress"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "sandbox egress" 0' -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name'

# sbx sandbox stop
complete -c sbx -n '__sbx_at "sandbox stop"' -s l -l label -x -d 'every sandbox with this label (k=v, k!=v, k, !k; repeatable: all must hold)'
complete -c sbx -n '__sbx_at "sandbox stop"' -s y -l yes -d 'with --label: do not ask'
complete -c sbx -n '__sbx_at "sandbox stop"' -l json -d 'print what was ended as JSON'
complete -c sbx -n '__sbx_at "sandbox stop"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "sandbox stop"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "sandbox stop"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "sandbox stop"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "sandbox stop"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "sandbox stop"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "sandbox stop"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "sandbox stop" 0' -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name'

# sbx sandbox start
complete -c sbx -n '__sbx_at "sandbox start"' -l json -d 'print the sandbox as JSON'
complete -c sbx -n '__sbx_at "sandbox start"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "sandbox start"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "sandbox start"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "sandbox start"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "sandbox start"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "sandbox start"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "sandbox start"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "sandbox start" 0' -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name'

# sbx sandbox pause
complete -c sbx -n '__sbx_at "sandbox pause"' -l json -d 'print the sandbox as JSON'
complete -c sbx -n '__sbx_at "sandbox pause"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "sandbox pause"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "sandbox pause"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "sandbox pause"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "sandbox pause"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "sandbox pause"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "sandbox pause"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "sandbox pause" 0' -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name'

# sbx sandbox resume
complete -c sbx -n '__sbx_at "sandbox resume"' -l json -d 'print the sandbox as JSON'
complete -c sbx -n '__sbx_at "sandbox resume"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "sandbox resume"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "sandbox resume"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "sandbox resume"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "sandbox resume"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "sandbox resume"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "sandbox resume"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "sandbox resume" 0' -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name'

# sbx sandbox rm
complete -c sbx -n '__sbx_at "sandbox rm"' -s l -l label -x -d 'every sandbox with this label (k=v, k!=v, k, !k; repeatable: all must hold)'
complete -c sbx -n '__sbx_at "sandbox rm"' -s y -l yes -d 'with --label: do not ask'
complete -c sbx -n '__sbx_at "sandbox rm"' -s f -l force -d 'remove without asking, cancelling its executions and stopping its processes first'
complete -c sbx -n '__sbx_at "sandbox rm"' -l json -d 'print {removed}'
complete -c sbx -n '__sbx_at "sandbox rm"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "sandbox rm"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "sandbox rm"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "sandbox rm"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "sandbox rm"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "sandbox rm"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "sandbox rm"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "sandbox rm" 0' -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name'

# sbx image
complete -c sbx -n '__sbx_arg "image" 0' -a pull -d 'pull an image into the store'
complete -c sbx -n '__sbx_arg "image" 0' -a import -d 'import an image from an OCI archive file'
complete -c sbx -n '__sbx_arg "image" 0' -a list -d 'list images'
complete -c sbx -n '__sbx_arg "image" 0' -a ls -d 'list images (alias of list)'
complete -c sbx -n '__sbx_arg "image" 0' -a rm -d 'remove an image'
complete -c sbx -n '__sbx_at "image"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "image"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "image"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "image"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "image"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "image"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "image"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "image"' -s h -l help -d 'show help'

# sbx image pull
complete -c sbx -n '__sbx_at "image pull"' -l json -d 'print the image as JSON'
complete -c sbx -n '__sbx_at "image pull"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "image pull"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "image pull"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "image pull"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "image pull"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "image pull"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "image pull"' -s h -l help -d 'show help'

# sbx image import
complete -c sbx -n '__sbx_at "image import"' -l json -d 'print the image as JSON'
complete -c sbx -n '__sbx_at "image import"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "image import"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "image import"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "image import"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "image import"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "image import"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "image import"' -s h -l help -d 'show help'

# sbx image list
complete -c sbx -n '__sbx_at "image list"' -l json -d 'print {images: [...]}'
complete -c sbx -n '__sbx_at "image list"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "image list"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "image list"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "image list"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "image list"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "image list"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "image list"' -s h -l help -d 'show help'

# sbx image rm
complete -c sbx -n '__sbx_at "image rm"' -l json -d 'print {removed, blobs_removed}'
complete -c sbx -n '__sbx_at "image rm"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "image rm"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "image rm"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "image rm"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "image rm"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "image rm"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "image rm"' -s h -l help -d 'show help'

# sbx volume
complete -c sbx -n '__sbx_arg "volume" 0' -a create -d 'create a named volume'
complete -c sbx -n '__sbx_arg "volume" 0' -a list -d 'list named volumes'
complete -c sbx -n '__sbx_arg "volume" 0' -a ls -d 'list named volumes (alias of list)'
complete -c sbx -n '__sbx_arg "volume" 0' -a show -d 'show a named volume'
complete -c sbx -n '__sbx_arg "volume" 0' -a rm -d 'remove a named volume and its files'
complete -c sbx -n '__sbx_at "volume"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "volume"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "volume"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "volume"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "volume"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "volume"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "volume"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "volume"' -s h -l help -d 'show help'

# sbx volume create
complete -c sbx -n '__sbx_at "volume create"' -l size -x -d 'its size, a file system of its own (at least 16MiB; root)'
complete -c sbx -n '__sbx_at "volume create"' -l json -d 'print the volume as JSON'
complete -c sbx -n '__sbx_at "volume create"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "volume create"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "volume create"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "volume create"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "volume create"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "volume create"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "volume create"' -s h -l help -d 'show help'

# sbx volume list
complete -c sbx -n '__sbx_at "volume list"' -l json -d 'print {volumes: [...]}'
complete -c sbx -n '__sbx_at "volume list"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "volume list"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "volume list"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "volume list"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "volume list"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "volume list"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "volume list"' -s h -l help -d 'show help'

# sbx volume show
complete -c sbx -n '__sbx_at "volume show"' -l json -d 'print the volume as JSON'
complete -c sbx -n '__sbx_at "volume show"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "volume show"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "volume show"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "volume show"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "volume show"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "volume show"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "volume show"' -s h -l help -d 'show help'

# sbx volume rm
complete -c sbx -n '__sbx_at "volume rm"' -l json -d 'print the removed volume as JSON'
complete -c sbx -n '__sbx_at "volume rm"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "volume rm"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "volume rm"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "volume rm"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "volume rm"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "volume rm"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "volume rm"' -s h -l help -d 'show help'

# sbx cp
complete -c sbx -n '__sbx_at "cp"' -s L -l follow-link -d 'follow a symlink named as SANDBOX:PATH (only where it stays inside /workspace)'
complete -c sbx -n '__sbx_at "cp"' -l json -d 'print {source, destination, type, bytes, sha256, entries} (and target, for a symlink)'
complete -c sbx -n '__sbx_at "cp"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "cp"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "cp"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "cp"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "cp"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "cp"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "cp"' -s h -l help -d 'show help'

# sbx port-forward
complete -c sbx -n '__sbx_at "port-forward"' -l address -x -d 'local address to listen on, repeatable or comma-separated (default: 127.0.0.1)'
complete -c sbx -n '__sbx_at "port-forward"' -l json -d 'print JSON Lines on stdout: {event: listening|connection_failed|stopped, ...}'
complete -c sbx -n '__sbx_at "port-forward"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "port-forward"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "port-forward"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "port-forward"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "port-forward"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "port-forward"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "port-forward"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "port-forward" 0' -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name'

# sbx port
complete -c sbx -n '__sbx_at "port"' -l json -d 'print {sandbox_id, name, ports: [{port, protocol, host_ip, host_port, listening, reason}]}'
complete -c sbx -n '__sbx_at "port"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "port"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "port"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "port"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "port"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "port"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "port"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "port" 0' -a '(__sbx_backend_words sandbox-name)' -d 'sandbox id or name'

# sbx mcp
complete -c sbx -n '__sbx_at "mcp"' -s s -l sandbox -x -a '(__sbx_backend_words sandbox-name)' -d 'the sandbox tools act on when a call names none (default: default)'
complete -c sbx -n '__sbx_at "mcp"' -l tools -x -d 'tools to offer: names, read-only (tools that change nothing), all (default)'
complete -c sbx -n '__sbx_at "mcp"' -l max-output-bytes -x -d 'bytes of each output stream a result carries at most (default: 65536)'
complete -c sbx -n '__sbx_at "mcp"' -l manage-sandboxes -d 'offer sandbox_create and sandbox_stop (default: the agent uses the sandboxes there are)'
complete -c sbx -n '__sbx_at "mcp"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "mcp"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "mcp"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "mcp"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "mcp"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "mcp"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "mcp"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "mcp"' -s h -l help -d 'show help'

# sbx daemon
complete -c sbx -n '__sbx_arg "daemon" 0' -a run -d 'run the embedded backend in the foreground'
complete -c sbx -n '__sbx_arg "daemon" 0' -a start -d 'start the local daemon in the background'
complete -c sbx -n '__sbx_arg "daemon" 0' -a stop -d 'stop the local daemon'
complete -c sbx -n '__sbx_arg "daemon" 0' -a status -d 'say whether the local daemon is running (exit 75 when not)'
complete -c sbx -n '__sbx_at "daemon"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "daemon"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "daemon"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "daemon"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "daemon"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "daemon"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "daemon"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "daemon"' -s h -l help -d 'show help'

# sbx daemon run
complete -c sbx -n '__sbx_at "daemon run"' -l listen -x -d 'also listen on TCP (requires the token)'
complete -c sbx -n '__sbx_at "daemon run"' -l faults -x -d 'inject faults (see below) to rehearse recovery'
complete -c sbx -n '__sbx_at "daemon run"' -l idle-exit -x -d 'exit after this long idle with nothing running'
complete -c sbx -n '__sbx_at "daemon run"' -l sandbox-idle-timeout -x -d 'stop a sandbox\'s environment after this long with nothing running in it, unless it sets its own (default: off)'
complete -c sbx -n '__sbx_at "daemon run"' -l key-retention -x -d 'how long idempotency keys are kept (default: 7d)'
complete -c sbx -n '__sbx_at "daemon run"' -l process-log-segment -x -d 'rotate process log files at this size (default: 8MiB)'
complete -c sbx -n '__sbx_at "daemon run"' -l process-log-keep -x -d 'process log bytes kept per stream (default: 64MiB)'
complete -c sbx -n '__sbx_at "daemon run"' -l execution-output-max -x -d 'execution output kept on disk per stream (default: 256MiB)'
complete -c sbx -n '__sbx_at "daemon run"' -l retain -x -d 'keep finished executions and exited processes this long (default: 30d; never less than --key-retention)'
complete -c sbx -n '__sbx_at "daemon run"' -l retain-size -x -d 'keep at most this much; the oldest finished outputs go first (default: 5GiB)'
complete -c sbx -n '__sbx_at "daemon run"' -l job-concurrency -x -d 'jobs running at once per sandbox; the rest wait queued (default: 4)'
complete -c sbx -n '__sbx_at "daemon run"' -l job-output-max -x -d 'output kept per job: its first and last halves (default: 8MiB)'
complete -c sbx -n '__sbx_at "daemon run"' -l driver -x -d 'where sandboxes run: local (bwrap or none, default) or slurm (allocations on a cluster)'
complete -c sbx -n '__sbx_at "daemon run"' -l slurm-partition -x -d 'the Slurm partition sandboxes are allocated in (default: the cluster\'s)'
complete -c sbx -n '__sbx_at "daemon run"' -l slurm-account -x -d 'the Slurm account allocations are charged to (default: the user\'s)'
complete -c sbx -n '__sbx_at "daemon run"' -l slurm-shared-dir -x -d 'a directory every node sees at the same path; with --driver slurm'
complete -c sbx -n '__sbx_at "daemon run"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "daemon run"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "daemon run"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "daemon run"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "daemon run"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "daemon run"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "daemon run"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "daemon run"' -s h -l help -d 'show help'

# sbx daemon start
complete -c sbx -n '__sbx_at "daemon start"' -l idle-exit -x -d 'exit after this long idle with nothing running (default: never)'
complete -c sbx -n '__sbx_at "daemon start"' -l sandbox-idle-timeout -x -d 'stop idle sandboxes\' environments after this long (default: off)'
complete -c sbx -n '__sbx_at "daemon start"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "daemon start"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "daemon start"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "daemon start"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "daemon start"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "daemon start"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "daemon start"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "daemon start"' -s h -l help -d 'show help'

# sbx daemon stop
complete -c sbx -n '__sbx_at "daemon stop"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "daemon stop"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "daemon stop"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "daemon stop"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "daemon stop"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "daemon stop"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "daemon stop"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "daemon stop"' -s h -l help -d 'show help'

# sbx daemon status
complete -c sbx -n '__sbx_at "daemon status"' -l json -d 'print {running, pid, socket, version, started_at, isolation, storage}'
complete -c sbx -n '__sbx_at "daemon status"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "daemon status"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "daemon status"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "daemon status"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "daemon status"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "daemon status"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "daemon status"' -s h -l help -d 'show help'

# sbx init
complete -c sbx -n '__sbx_at "init"' -l profile-name -x -d 'name of the remote profile to create or replace'
complete -c sbx -n '__sbx_at "init"' -l api-url -x -d 'the remote backend: https://host[:port] or unix:/path.sock'
complete -c sbx -n '__sbx_at "init"' -l api-key-stdin -d 'read the API key from stdin'
complete -c sbx -n '__sbx_at "init"' -l insecure -d 'let the key go over plain http:// to another machine (trusted network)'
complete -c sbx -n '__sbx_at "init"' -s y -l yes -d 'accept the defaults without asking (the embedded backend)'
complete -c sbx -n '__sbx_at "init"' -l json -d 'print {profile, api_url, api_key, insecure, current, backend, health}'
complete -c sbx -n '__sbx_at "init"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "init"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "init"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "init"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "init"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "init"' -s h -l help -d 'show help'

# sbx profile
complete -c sbx -n '__sbx_arg "profile" 0' -a add -d 'add or replace a profile'
complete -c sbx -n '__sbx_arg "profile" 0' -a list -d 'list profiles (the current one marked *)'
complete -c sbx -n '__sbx_arg "profile" 0' -a ls -d 'list profiles (the current one marked *) (alias of list)'
complete -c sbx -n '__sbx_arg "profile" 0' -a use -d 'make a profile the current one'
complete -c sbx -n '__sbx_arg "profile" 0' -a show -d 'show a profile (default: the one in effect)'
complete -c sbx -n '__sbx_arg "profile" 0' -a rm -d 'remove a profile and its stored key'
complete -c sbx -n '__sbx_at "profile"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "profile"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "profile"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "profile"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "profile"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "profile"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "profile"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "profile"' -s h -l help -d 'show help'

# sbx profile add
complete -c sbx -n '__sbx_at "profile add"' -l api-url -x -d 'https://host[:port] or unix:/path.sock'
complete -c sbx -n '__sbx_at "profile add"' -l api-key-stdin -d 'read the API key from stdin'
complete -c sbx -n '__sbx_at "profile add"' -l insecure -d 'let the key go over plain http:// to another machine (trusted network)'
complete -c sbx -n '__sbx_at "profile add"' -l use -d 'make it the current profile'
complete -c sbx -n '__sbx_at "profile add"' -l json -d 'print the saved profile (without the key)'
complete -c sbx -n '__sbx_at "profile add"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "profile add"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "profile add"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "profile add"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "profile add"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "profile add"' -s h -l help -d 'show help'

# sbx profile list
complete -c sbx -n '__sbx_at "profile list"' -l json -d 'print {profiles: [...]}'
complete -c sbx -n '__sbx_at "profile list"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "profile list"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "profile list"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "profile list"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "profile list"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "profile list"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "profile list"' -s h -l help -d 'show help'

# sbx profile use
complete -c sbx -n '__sbx_at "profile use"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "profile use"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "profile use"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "profile use"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "profile use"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "profile use"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "profile use"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "profile use"' -s h -l help -d 'show help'

# sbx profile show
complete -c sbx -n '__sbx_at "profile show"' -l json -d 'print the profile as JSON'
complete -c sbx -n '__sbx_at "profile show"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "profile show"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "profile show"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "profile show"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "profile show"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "profile show"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "profile show"' -s h -l help -d 'show help'

# sbx profile rm
complete -c sbx -n '__sbx_at "profile rm"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "profile rm"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "profile rm"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "profile rm"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "profile rm"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "profile rm"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "profile rm"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "profile rm"' -s h -l help -d 'show help'

# sbx config
complete -c sbx -n '__sbx_arg "config" 0' -a get -d 'print a setting (all settings without KEY)'
complete -c sbx -n '__sbx_arg "config" 0' -a set -d 'change a setting'
complete -c sbx -n '__sbx_at "config"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "config"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "config"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "config"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "config"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "config"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "config"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "config"' -s h -l help -d 'show help'

# sbx config get
complete -c sbx -n '__sbx_at "config get"' -l json -d 'print as JSON'
complete -c sbx -n '__sbx_at "config get"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "config get"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "config get"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "config get"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "config get"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "config get"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "config get"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "config get" 0' -a 'sandbox timeout detach_keys color' -d 'setting name'

# sbx config set
complete -c sbx -n '__sbx_at "config set"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "config set"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "config set"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "config set"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "config set"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "config set"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "config set"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "config set"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "config set" 0' -a 'sandbox timeout detach_keys color' -d 'setting name'

# sbx completion
complete -c sbx -n '__sbx_at "completion"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "completion"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "completion"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "completion"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "completion"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "completion"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "completion"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "completion"' -s h -l help -d 'show help'
complete -c sbx -n '__sbx_arg "completion" 0' -a 'bash zsh fish' -d 'bash, zsh or fish'

# sbx help
complete -c sbx -n '__sbx_at "help"' -l man -d 'the whole manual, sbx(1), through your pager (its roff source in a pipe)'
complete -c sbx -n '__sbx_at "help"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "help"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "help"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "help"' -l json -d 'print JSON documents and nothing else on stdout'
complete -c sbx -n '__sbx_at "help"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "help"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "help"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "help"' -s h -l help -d 'show help'

# sbx version
complete -c sbx -n '__sbx_at "version"' -l json -d 'print {version, protocol}'
complete -c sbx -n '__sbx_at "version"' -s V -l version -d 'print the version'
complete -c sbx -n '__sbx_at "version"' -l profile -x -d 'profile to use (env SBX_PROFILE; default: local)'
complete -c sbx -n '__sbx_at "version"' -l api-url -x -d 'backend URL: https://host[:port] or unix:/path.sock (env SBX_API_URL)'
complete -c sbx -n '__sbx_at "version"' -l no-color -d 'no colour (also NO_COLOR)'
complete -c sbx -n '__sbx_at "version"' -s q -l quiet -d 'print only data'
complete -c sbx -n '__sbx_at "version"' -l verbose -d 'say more on stderr'
complete -c sbx -n '__sbx_at "version"' -s h -l help -d 'show help'

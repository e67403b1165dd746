# bash completion for sbx
# Generated from sbx's command tree by `npm run generate`; do not edit.
# Install: sbx completion bash > ~/.local/share/bash-completion/completions/sbx

# _sbx_subcommand PATH WORD: succeeds when WORD names a command under PATH; REPLY is its path.
_sbx_subcommand() {
  case "$1|$2" in
    "|exec") REPLY="exec" ;;
    "|run") REPLY="run" ;;
    "|shell") REPLY="shell" ;;
    "|attach") REPLY="attach" ;;
    "|receipts") REPLY="receipts" ;;
    "|recover") REPLY="recover" ;;
    "|logs") REPLY="logs" ;;
    "|cancel") REPLY="cancel" ;;
    "|process") REPLY="process" ;;
    "|ps") REPLY="ps" ;;
    "|jobs") REPLY="jobs" ;;
    "|sandbox") REPLY="sandbox" ;;
    "|image") REPLY="image" ;;
    "|volume") REPLY="volume" ;;
    "|cp") REPLY="cp" ;;
    "|port-forward") REPLY="port-forward" ;;
    "|port") REPLY="port" ;;
    "|mcp") REPLY="mcp" ;;
    "|daemon") REPLY="daemon" ;;
    "|init") REPLY="init" ;;
    "|profile") REPLY="profile" ;;
    "|config") REPLY="config" ;;
    "|completion") REPLY="completion" ;;
    "|help") REPLY="help" ;;
    "|version") REPLY="version" ;;
    "receipts|list") REPLY="receipts list" ;;
    "receipts|show") REPLY="receipts show" ;;
    "receipts|wait") REPLY="receipts wait" ;;
    "receipts|refresh") REPLY="receipts refresh" ;;
    "receipts|resubmit") REPLY="receipts resubmit" ;;
    "receipts|export") REPLY="receipts export" ;;
    "receipts|prune") REPLY="receipts prune" ;;
    "receipts|verify") REPLY="receipts verify" ;;
    "receipts|key") REPLY="receipts key" ;;
    "receipts|timeline") REPLY="receipts timeline" ;;
    "process|start") REPLY="process start" ;;
    "process|list") REPLY="process list" ;;
    "process|show") REPLY="process show" ;;
    "process|logs") REPLY="process logs" ;;
    "process|result") REPLY="process result" ;;
    "process|stdin") REPLY="process stdin" ;;
    "process|attach") REPLY="process attach" ;;
    "process|signal") REPLY="process signal" ;;
    "process|stop") REPLY="process stop" ;;
    "process|rm") REPLY="process rm" ;;
    "jobs|submit") REPLY="jobs submit" ;;
    "jobs|run") REPLY="jobs run" ;;
    "jobs|list") REPLY="jobs list" ;;
    "jobs|show") REPLY="jobs show" ;;
    "jobs|logs") REPLY="jobs logs" ;;
    "jobs|wait") REPLY="jobs wait" ;;
    "jobs|cancel") REPLY="jobs cancel" ;;
    "sandbox|create") REPLY="sandbox create" ;;
    "sandbox|list" | "sandbox|ls") REPLY="sandbox list" ;;
    "sandbox|show") REPLY="sandbox show" ;;
    "sandbox|stats") REPLY="sandbox stats" ;;
    "sandbox|update") REPLY="sandbox update" ;;
    "sandbox|egress") REPLY="sandbox egress" ;;
    "sandbox|stop") REPLY="sandbox stop" ;;
    "sandbox|start") REPLY="sandbox start" ;;
    "sandbox|pause") REPLY="sandbox pause" ;;
    "sandbox|resume") REPLY="sandbox resume" ;;
    "sandbox|rm") REPLY="sandbox rm" ;;
    "image|pull") REPLY="image pull" ;;
    "image|import") REPLY="image import" ;;
    "image|list" | "image|ls") REPLY="image list" ;;
    "image|rm") REPLY="image rm" ;;
    "volume|create") REPLY="volume create" ;;
    "volume|list" | "volume|ls") REPLY="volume list" ;;
    "volume|show") REPLY="volume show" ;;
    "volume|rm") REPLY="volume rm" ;;
    "daemon|run") REPLY="daemon run" ;;
    "daemon|start") REPLY="daemon start" ;;
    "daemon|stop") REPLY="daemon stop" ;;
    "daemon|status") REPLY="daemon status" ;;
    "profile|add") REPLY="profile add" ;;
    "profile|list" | "profile|ls") REPLY="profile list" ;;
    "profile|use") REPLY="profile use" ;;
    "profile|show") REPLY="profile show" ;;
    "profile|rm") REPLY="profile rm" ;;
    "config|get") REPLY="config get" ;;
    "config|set") REPLY="config set" ;;
    *) return 1 ;;
  esac
}

# _sbx_spec PATH: the subcommands, options, options that read a value, and arguments at PATH.
_sbx_spec() {
  case "$1" in
    "")
      _sbx_commands="exec run shell attach receipts recover logs cancel process ps jobs sandbox image volume cp port-forward port mcp daemon init profile config completion help version"
      _sbx_options="-V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "exec")
      _sbx_commands=""
      _sbx_options="-s --sandbox --shell --timeout --client-timeout --cwd -e --env --env-file --stdin --idempotency-key --stream --detach -i --interactive -t --tty --detach-keys --fail-on-truncated --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --shell --timeout --client-timeout --cwd -e --env --env-file --idempotency-key --detach-keys --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=1
      ;;
    "run")
      _sbx_commands=""
      _sbx_options="--name --image --keep --isolation --network --no-network -p --publish -l --label -v --volume --allow-domain --deny-domain --allow-cidr --egress-policy --memory --pids --cpus --tmp-size --disk --shell --timeout --client-timeout --cwd -e --env --env-file -i --stdin --stream --fail-on-truncated --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--name --image --isolation -p --publish -l --label -v --volume --allow-domain --deny-domain --allow-cidr --egress-policy --memory --pids --cpus --tmp-size --disk --shell --timeout --client-timeout --cwd -e --env --env-file --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=1
      ;;
    "shell")
      _sbx_commands=""
      _sbx_options="-s --sandbox --cwd -e --env --timeout --detach-keys --idempotency-key -V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --cwd -e --env --timeout --detach-keys --idempotency-key --profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "attach")
      _sbx_commands=""
      _sbx_options="-s --sandbox --replay --detach-keys -V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --detach-keys --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "receipts")
      _sbx_commands="list show wait refresh resubmit export prune verify key timeline"
      _sbx_options="-V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "receipts list")
      _sbx_commands=""
      _sbx_options="--classification --limit --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--classification --limit --profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "receipts show")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "receipts wait")
      _sbx_commands=""
      _sbx_options="--timeout --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--timeout --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "receipts refresh")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "receipts resubmit")
      _sbx_commands=""
      _sbx_options="--client-timeout --force --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--client-timeout --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "receipts export")
      _sbx_commands=""
      _sbx_options="--since --bundle --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--since --bundle --profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "receipts prune")
      _sbx_commands=""
      _sbx_options="--before --include-in-doubt --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--before --profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "receipts verify")
      _sbx_commands=""
      _sbx_options="--bundle --key --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--bundle --key --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=1
      ;;
    "receipts key")
      _sbx_commands=""
      _sbx_options="--pem --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "receipts timeline")
      _sbx_commands=""
      _sbx_options="--since --limit --html -V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--since --limit --html --profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "recover")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "logs")
      _sbx_commands=""
      _sbx_options="-s --sandbox -f --follow --after --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --after --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "cancel")
      _sbx_commands=""
      _sbx_options="-s --sandbox --reason --wait --timeout --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --reason --timeout --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "process")
      _sbx_commands="start list show logs result stdin attach signal stop rm"
      _sbx_options="-V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "process start")
      _sbx_commands=""
      _sbx_options="-s --sandbox --name --shell --stdin --tty --restart --max-restarts --backoff --max-backoff --timeout --cwd -e --env --env-file --idempotency-key --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --name --shell --restart --max-restarts --backoff --max-backoff --timeout --cwd -e --env --env-file --idempotency-key --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=1
      ;;
    "process list")
      _sbx_commands=""
      _sbx_options="-s --sandbox -A --all-sandboxes --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "process show")
      _sbx_commands=""
      _sbx_options="-s --sandbox --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "process logs")
      _sbx_commands=""
      _sbx_options="-s --sandbox --stream --offset --limit -f --follow --text --raw --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --stream --offset --limit --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "process result")
      _sbx_commands=""
      _sbx_options="-s --sandbox --wait --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --wait --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "process stdin")
      _sbx_commands=""
      _sbx_options="-s --sandbox --file --eof --run --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --file --run --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "process attach")
      _sbx_commands=""
      _sbx_options="-s --sandbox --replay --detach-keys -V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --detach-keys --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "process signal")
      _sbx_commands=""
      _sbx_options="-s --sandbox --run --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --run --profile --api-url"
      _sbx_nargs=2 _sbx_variadic=0
      ;;
    "process stop")
      _sbx_commands=""
      _sbx_options="-s --sandbox --grace --run --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --grace --run --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "process rm")
      _sbx_commands=""
      _sbx_options="-s --sandbox --grace -V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --grace --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "ps")
      _sbx_commands=""
      _sbx_options="-s --sandbox -A --all-sandboxes --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "jobs")
      _sbx_commands="submit run list show logs wait cancel"
      _sbx_options="-V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "jobs submit")
      _sbx_commands=""
      _sbx_options="-s --sandbox --wait --timeout --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --timeout --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "jobs run")
      _sbx_commands=""
      _sbx_options="-s --sandbox --name --timeout --shell --cwd -e --env --env-file --queue-key --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --name --timeout --shell --cwd -e --env --env-file --queue-key --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=1
      ;;
    "jobs list")
      _sbx_commands=""
      _sbx_options="-s --sandbox -A --all-sandboxes --request --status --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --request --status --profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "jobs show")
      _sbx_commands=""
      _sbx_options="-s --sandbox --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "jobs logs")
      _sbx_commands=""
      _sbx_options="-s --sandbox -f --follow --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "jobs wait")
      _sbx_commands=""
      _sbx_options="-s --sandbox --request --timeout --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --request --timeout --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=1
      ;;
    "jobs cancel")
      _sbx_commands=""
      _sbx_options="-s --sandbox --dependents --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "sandbox")
      _sbx_commands="create list ls show stats update egress stop start pause resume rm"
      _sbx_options="-V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "sandbox create")
      _sbx_commands=""
      _sbx_options="--isolation --network --no-network -p --publish -l --label --idle-timeout -v --volume --allow-domain --deny-domain --allow-cidr --egress-policy --image --memory --pids --cpus --tmp-size --disk --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--isolation -p --publish -l --label --idle-timeout -v --volume --allow-domain --deny-domain --allow-cidr --egress-policy --image --memory --pids --cpus --tmp-size --disk --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "sandbox list")
      _sbx_commands=""
      _sbx_options="-l --label --show-labels --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-l --label --profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "sandbox show")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "sandbox stats")
      _sbx_commands=""
      _sbx_options="-f --follow --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=1
      ;;
    "sandbox update")
      _sbx_commands=""
      _sbx_options="-l --label --idle-timeout --memory --pids --cpus --tmp-size --disk --allow-domain --deny-domain --allow-cidr --egress-policy --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-l --label --idle-timeout --memory --pids --cpus --tmp-size --disk --allow-domain --deny-domain --allow-cidr --egress-policy --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "sandbox egress")
      _sbx_commands=""
      _sbx_options="-f --follow --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "sandbox stop")
      _sbx_commands=""
      _sbx_options="-l --label -y --yes --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-l --label --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "sandbox start")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "sandbox pause")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "sandbox resume")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "sandbox rm")
      _sbx_commands=""
      _sbx_options="-l --label -y --yes -f --force --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-l --label --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "image")
      _sbx_commands="pull import list ls rm"
      _sbx_options="-V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "image pull")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "image import")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "image list")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "image rm")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "volume")
      _sbx_commands="create list ls show rm"
      _sbx_options="-V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "volume create")
      _sbx_commands=""
      _sbx_options="--size --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--size --profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "volume list")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "volume show")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "volume rm")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "cp")
      _sbx_commands=""
      _sbx_options="-L --follow-link --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=2 _sbx_variadic=0
      ;;
    "port-forward")
      _sbx_commands=""
      _sbx_options="--address --json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--address --profile --api-url"
      _sbx_nargs=2 _sbx_variadic=1
      ;;
    "port")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=2 _sbx_variadic=0
      ;;
    "mcp")
      _sbx_commands=""
      _sbx_options="-s --sandbox --tools --max-output-bytes --manage-sandboxes -V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="-s --sandbox --tools --max-output-bytes --profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "daemon")
      _sbx_commands="run start stop status"
      _sbx_options="-V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "daemon run")
      _sbx_commands=""
      _sbx_options="--listen --faults --idle-exit --sandbox-idle-timeout --key-retention --process-log-segment --process-log-keep --execution-output-max --retain --retain-size --job-concurrency --job-output-max --driver --slurm-partition --slurm-account --slurm-shared-dir -V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--listen --faults --idle-exit --sandbox-idle-timeout --key-retention --process-log-segment --process-log-keep --execution-output-max --retain --retain-size --job-concurrency --job-output-max --driver --slurm-partition --slurm-account --slurm-shared-dir --profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "daemon start")
      _sbx_commands=""
      _sbx_options="--idle-exit --sandbox-idle-timeout -V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--idle-exit --sandbox-idle-timeout --profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "daemon stop")
      _sbx_commands=""
      _sbx_options="-V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "daemon status")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "init")
      _sbx_commands=""
      _sbx_options="--profile-name --api-url --api-key-stdin --insecure -y --yes --json -V --version --profile --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile-name --api-url --profile"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "profile")
      _sbx_commands="add list ls use show rm"
      _sbx_options="-V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "profile add")
      _sbx_commands=""
      _sbx_options="--api-url --api-key-stdin --insecure --use --json -V --version --profile --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--api-url --profile"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "profile list")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "profile use")
      _sbx_commands=""
      _sbx_options="-V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "profile show")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "profile rm")
      _sbx_commands=""
      _sbx_options="-V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "config")
      _sbx_commands="get set"
      _sbx_options="-V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
    "config get")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "config set")
      _sbx_commands=""
      _sbx_options="-V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=2 _sbx_variadic=0
      ;;
    "completion")
      _sbx_commands=""
      _sbx_options="-V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=0
      ;;
    "help")
      _sbx_commands=""
      _sbx_options="--man -V --version --profile --api-url --json --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=1 _sbx_variadic=1
      ;;
    "version")
      _sbx_commands=""
      _sbx_options="--json -V --version --profile --api-url --no-color -q --quiet --verbose -h --help"
      _sbx_valued="--profile --api-url"
      _sbx_nargs=0 _sbx_variadic=0
      ;;
  esac
}

# _sbx_values PATH TARGET: how the value of option TARGET (or of argument #N) completes.
_sbx_values() {
  _sbx_kind=none _sbx_words=
  case "$1|$2" in
    "exec|-s") _sbx_kind=sandbox-name ;;
    "exec|--sandbox") _sbx_kind=sandbox-name ;;
    "exec|--env-file") _sbx_kind=file ;;
    "exec|#0") _sbx_kind=command ;;
    "run|--isolation") _sbx_kind=words _sbx_words="auto bwrap none" ;;
    "run|--env-file") _sbx_kind=file ;;
    "run|#0") _sbx_kind=command ;;
    "shell|-s") _sbx_kind=sandbox-name ;;
    "shell|--sandbox") _sbx_kind=sandbox-name ;;
    "attach|-s") _sbx_kind=sandbox-name ;;
    "attach|--sandbox") _sbx_kind=sandbox-name ;;
    "attach|#0") _sbx_kind=receipt-id ;;
    "receipts list|--classification") _sbx_kind=words _sbx_words="succeeded admitted failed timed_out cancelled outcome_unknown result_unconfirmed in_progress record_pending running not_started rejected local_timeout dispatched" ;;
    "receipts show|#0") _sbx_kind=receipt-id ;;
    "receipts wait|#0") _sbx_kind=receipt-id ;;
    "receipts refresh|#0") _sbx_kind=receipt-id ;;
    "receipts resubmit|#0") _sbx_kind=receipt-id ;;
    "receipts export|--bundle") _sbx_kind=file ;;
    "receipts verify|--bundle") _sbx_kind=file ;;
    "receipts verify|#0") _sbx_kind=receipt-id ;;
    "receipts timeline|--html") _sbx_kind=file ;;
    "logs|-s") _sbx_kind=sandbox-name ;;
    "logs|--sandbox") _sbx_kind=sandbox-name ;;
    "logs|#0") _sbx_kind=receipt-id ;;
    "cancel|-s") _sbx_kind=sandbox-name ;;
    "cancel|--sandbox") _sbx_kind=sandbox-name ;;
    "cancel|#0") _sbx_kind=receipt-id ;;
    "process start|-s") _sbx_kind=sandbox-name ;;
    "process start|--sandbox") _sbx_kind=sandbox-name ;;
    "process start|--restart") _sbx_kind=words _sbx_words="never on-failure always" ;;
    "process start|--env-file") _sbx_kind=file ;;
    "process start|#0") _sbx_kind=command ;;
    "process list|-s") _sbx_kind=sandbox-name ;;
    "process list|--sandbox") _sbx_kind=sandbox-name ;;
    "process show|-s") _sbx_kind=sandbox-name ;;
    "process show|--sandbox") _sbx_kind=sandbox-name ;;
    "process show|#0") _sbx_kind=process-name ;;
    "process logs|-s") _sbx_kind=sandbox-name ;;
    "process logs|--sandbox") _sbx_kind=sandbox-name ;;
    "process logs|--stream") _sbx_kind=words _sbx_words="stdout stderr" ;;
    "process logs|#0") _sbx_kind=process-name ;;
    "process result|-s") _sbx_kind=sandbox-name ;;
    "process result|--sandbox") _sbx_kind=sandbox-name ;;
    "process result|#0") _sbx_kind=process-name ;;
    "process stdin|-s") _sbx_kind=sandbox-name ;;
    "process stdin|--sandbox") _sbx_kind=sandbox-name ;;
    "process stdin|--file") _sbx_kind=file ;;
    "process stdin|#0") _sbx_kind=process-name ;;
    "process attach|-s") _sbx_kind=sandbox-name ;;
    "process attach|--sandbox") _sbx_kind=sandbox-name ;;
    "process attach|#0") _sbx_kind=process-name ;;
    "process signal|-s") _sbx_kind=sandbox-name ;;
    "process signal|--sandbox") _sbx_kind=sandbox-name ;;
    "process signal|#0") _sbx_kind=process-name ;;
    "process signal|#1") _sbx_kind=words _sbx_words="TERM INT HUP KILL USR1 USR2" ;;
    "process stop|-s") _sbx_kind=sandbox-name ;;
    "process stop|--sandbox") _sbx_kind=sandbox-name ;;
    "process stop|#0") _sbx_kind=process-name ;;
    "process rm|-s") _sbx_kind=sandbox-name ;;
    "process rm|--sandbox") _sbx_kind=sandbox-name ;;
    "process rm|#0") _sbx_kind=process-name ;;
    "ps|-s") _sbx_kind=sandbox-name ;;
    "ps|--sandbox") _sbx_kind=sandbox-name ;;
    "jobs submit|-s") _sbx_kind=sandbox-name ;;
    "jobs submit|--sandbox") _sbx_kind=sandbox-name ;;
    "jobs submit|#0") _sbx_kind=file ;;
    "jobs run|-s") _sbx_kind=sandbox-name ;;
    "jobs run|--sandbox") _sbx_kind=sandbox-name ;;
    "jobs run|--env-file") _sbx_kind=file ;;
    "jobs run|#0") _sbx_kind=command ;;
    "jobs list|-s") _sbx_kind=sandbox-name ;;
    "jobs list|--sandbox") _sbx_kind=sandbox-name ;;
    "jobs list|--status") _sbx_kind=words _sbx_words="queued waiting running cancel_requested succeeded failed cancelled timed_out dependency_failed interrupted lost" ;;
    "jobs show|-s") _sbx_kind=sandbox-name ;;
    "jobs show|--sandbox") _sbx_kind=sandbox-name ;;
    "jobs show|#0") _sbx_kind=job-id ;;
    "jobs logs|-s") _sbx_kind=sandbox-name ;;
    "jobs logs|--sandbox") _sbx_kind=sandbox-name ;;
    "jobs logs|#0") _sbx_kind=job-id ;;
    "jobs wait|-s") _sbx_kind=sandbox-name ;;
    "jobs wait|--sandbox") _sbx_kind=sandbox-name ;;
    "jobs wait|#0") _sbx_kind=job-id ;;
    "jobs cancel|-s") _sbx_kind=sandbox-name ;;
    "jobs cancel|--sandbox") _sbx_kind=sandbox-name ;;
    "jobs cancel|#0") _sbx_kind=job-id ;;
    "sandbox create|--isolation") _sbx_kind=words _sbx_words="auto bwrap none" ;;
    "sandbox show|#0") _sbx_kind=sandbox-name ;;
    "sandbox stats|#0") _sbx_kind=sandbox-name ;;
    "sandbox update|#0") _sbx_kind=sandbox-name ;;
    "sandbox egress|#0") _sbx_kind=sandbox-name ;;
    "sandbox stop|#0") _sbx_kind=sandbox-name ;;
    "sandbox start|#0") _sbx_kind=sandbox-name ;;
    "sandbox pause|#0") _sbx_kind=sandbox-name ;;
    "sandbox resume|#0") _sbx_kind=sandbox-name ;;
    "sandbox rm|#0") _sbx_kind=sandbox-name ;;
    "port-forward|#0") _sbx_kind=sandbox-name ;;
    "port|#0") _sbx_kind=sandbox-name ;;
    "mcp|-s") _sbx_kind=sandbox-name ;;
    "mcp|--sandbox") _sbx_kind=sandbox-name ;;
    "config get|#0") _sbx_kind=words _sbx_words="sandbox timeout detach_keys color" ;;
    "config set|#0") _sbx_kind=words _sbx_words="sandbox timeout detach_keys color" ;;
    "completion|#0") _sbx_kind=words _sbx_words="bash zsh fish" ;;
  esac
}

# Receipt ids from the local store: the first column of piped `receipts list`, header skipped.
# Bounded (50) and silent when sbx is missing or fails.
_sbx_receipt_ids() {
  local id rest header=1
  while IFS=$'\t' read -r id rest; do
    if ((header)); then header=0; continue; fi
    printf '%s\n' "$id"
  done < <(command sbx receipts list --limit 50 2>/dev/null </dev/null)
}

# What the backend knows (sandbox names, process names, job ids), given the line so far
# (its -s picks the sandbox). Never starts the daemon; silent when it cannot be asked.
_sbx_backend_words() {
  command sbx __complete "$1" -- "${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null </dev/null
}

# _sbx_reply: COMPREPLY from the lines on stdin (mapfile is not in bash 3.2).
_sbx_reply() {
  local line
  COMPREPLY=()
  while IFS= read -r line; do COMPREPLY+=("$line"); done
}

# _sbx_complete_value PREFIX: fills COMPREPLY from _sbx_kind/_sbx_words for $cur.
_sbx_complete_value() {
  case "$_sbx_kind" in
    words) _sbx_reply < <(compgen -W "$_sbx_words" -- "$cur") ;;
    receipt-id) _sbx_reply < <(compgen -W "$(_sbx_receipt_ids)" -- "$cur") ;;
    sandbox-name | process-name | job-id) _sbx_reply < <(compgen -W "$(_sbx_backend_words "$_sbx_kind")" -- "$cur") ;;
    file)
      compopt -o filenames 2>/dev/null
      _sbx_reply < <(compgen -f -- "$cur")
      ;;
    *) COMPREPLY=() ;;
  esac
  if [[ -n $1 ]]; then COMPREPLY=("${COMPREPLY[@]/#/$1}"); fi
}

# _sbx_command_line N: completes words N.. as a command line of their own (sbx exec -- ...).
_sbx_command_line() {
  if declare -F _command_offset >/dev/null; then
    _command_offset "$1"
  elif ((COMP_CWORD == $1)); then
    _sbx_reply < <(compgen -c -- "$cur" | sort -u)
  else
    compopt -o default 2>/dev/null
    _sbx_reply < <(compgen -f -- "$cur")
  fi
}

_sbx() {
  local cur="${COMP_WORDS[COMP_CWORD]}" path="" word REPLY
  local _sbx_commands _sbx_options _sbx_valued _sbx_nargs _sbx_variadic _sbx_kind _sbx_words
  local -i i npos=0 first=0 skip=0 glue=0 dashdash=0
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="${COMP_WORDS[i]}"
    # bash splits --option=value at the '=': the word after it belongs to the option.
    if [[ $word == "=" ]]; then glue=1 skip=0; continue; fi
    if ((glue)); then glue=0; continue; fi
    if ((skip)); then skip=0; continue; fi
    if ((dashdash)); then npos+=1; continue; fi
    case "$word" in
      --) dashdash=i first=i+1 ;;
      --*=*) ;;
      -?*)
        _sbx_spec "$path"
        if [[ " $_sbx_valued " == *" $word "* ]]; then skip=1; fi
        ;;
      *)
        if ((npos == 0)) && _sbx_subcommand "$path" "$word"; then
          path="$REPLY"
        else
          ((npos == 0)) && first=i
          npos+=1
        fi
        ;;
    esac
  done
  _sbx_spec "$path"

  # The value of an option: `--opt value`, `--opt=value` split at '=', or `--opt=value` whole.
  local option="" prefix=""
  if [[ $cur == "=" ]] && ((skip)); then
    option="${COMP_WORDS[COMP_CWORD - 1]}" cur=""
  elif ((glue)) && ((COMP_CWORD >= 3)); then
    option="${COMP_WORDS[COMP_CWORD - 2]}"
  elif ((skip)); then
    option="${COMP_WORDS[COMP_CWORD - 1]}"
  elif ((!dashdash)) && [[ $cur == --*=* ]]; then
    option="${cur%%=*}" prefix="${cur%%=*}=" cur="${cur#*=}"
  fi
  if [[ -n $option ]]; then
    _sbx_values "$path" "$option"
    _sbx_complete_value "$prefix"
    return 0
  fi

  if ((!dashdash)) && [[ $cur == -* ]]; then
    _sbx_reply < <(compgen -W "$_sbx_options" -- "$cur")
    return 0
  fi
  if ((npos == 0 && !dashdash)) && [[ -n $_sbx_commands ]]; then
    _sbx_reply < <(compgen -W "$_sbx_commands" -- "$cur")
    return 0
  fi

  # A positional argument; the last one may repeat.
  local -i index=npos
  if ((index >= _sbx_nargs)); then
    ((_sbx_variadic)) || return 0
    index=_sbx_nargs-1
  fi
  _sbx_values "$path" "#$index"
  if [[ $_sbx_kind == command ]]; then
    ((first)) || first=COMP_CWORD
    _sbx_command_line "$first"
  else
    _sbx_complete_value ""
  fi
  return 0
}

complete -F _sbx sbx

#!/bin/sh
# The kemu image's entrypoint: `kemu serve`, configured the way Kafka images are, from environment
# variables, plus any kemu flags given as arguments (they come last, so they win):
#
#   KAFKA_LISTENERS             PLAINTEXT://0.0.0.0:9092   one PLAINTEXT listener -> --host, --port;
#                                                          several, or another kind (SSL, SASL_SSL,
#                                                          SASL_PLAINTEXT) -> the `listeners` setting
#   KAFKA_ADVERTISED_LISTENERS  PLAINTEXT://localhost:9092 first listener -> --advertised-host,
#                                                          --advertised-port (for a mapped port); with
#                                                          several listeners, `advertised.listeners`
#                                                          (default: KAFKA_LISTENERS, 0.0.0.0 as localhost)
#   KEMU_ADVERTISED_LISTENERS_FILE                         wait until this file holds a line, and use it
#                                                          as KAFKA_ADVERTISED_LISTENERS (see below)
#   KAFKA_NODE_ID (or KAFKA_BROKER_ID)                     -> --node-id
#   KAFKA_LOG_DIRS              /var/lib/kemu/data         first directory -> --data-dir
#   KEMU_LOG_LEVEL (or KAFKA_LOG4J_ROOT_LOGLEVEL)          -> --log-level
#   KEMU_CONTROL_PORT           unset (off)                -> --control-port: the control endpoint
#                                                          (HTTP/JSON), on the listen host like the broker
#   KEMU_BROKERS                1                          -> --brokers: a cluster of N brokers, listening
#                                                          (and advertised) on the N ports from the first
#                                                          listener's up: publish them all (-p 9092-9094:9092-9094)
#   KEMU_RACKS                  unset                      comma-separated, one per broker (or one for all)
#                                                          -> --rack each
#
# Other KAFKA_* variables become --override settings (see below).
# Arguments that do not start with "-" are run as a command instead (`docker run -it IMAGE sh`).
set -eu

if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
    exec "$@"
fi

say() { echo "kemu-docker: $*" >&2; }

# "PLAINTEXT://host:port,OTHER://..." -> "host:port" of the first listener.
first_listener() {
    listener=${1%%,*}
    echo "${listener#*://}"
}
host_of() { host=${1%:*}; host=${host#[}; echo "${host%]}"; }
port_of() { echo "${1##*:}"; }

# Several listeners, or one that is not plain PLAINTEXT, go to kemu as Kafka's own settings; the health
# check then probes the first PLAINTEXT or SASL_PLAINTEXT listener (ApiVersions needs no login on either).
listeners_setting=
case "${KAFKA_LISTENERS:-}" in
    *,*) listeners_setting=$KAFKA_LISTENERS ;;
    ""|PLAINTEXT://*|plaintext://*) ;;
    *) listeners_setting=$KAFKA_LISTENERS ;;
esac
[ -z "${KAFKA_LISTENER_SECURITY_PROTOCOL_MAP:-}" ] || listeners_setting=${KAFKA_LISTENERS:-}

# The security protocol of listener $1: from KAFKA_LISTENER_SECURITY_PROTOCOL_MAP, else its own name.
protocol_of() {
    name=$(echo "$1" | tr 'a-z' 'A-Z')
    for pair in $(echo "${KAFKA_LISTENER_SECURITY_PROTOCOL_MAP:-}" | tr ',' ' '); do
        [ "$(echo "${pair%%:*}" | tr 'a-z' 'A-Z')" = "$name" ] && { echo "${pair#*:}"; return; }
    done
    echo "$name"
}

listen_host=0.0.0.0
listen_port=9092
if [ -n "$listeners_setting" ]; then
    probe_listener=
    for listener in $(echo "$listeners_setting" | tr ',' ' '); do
        case "$(protocol_of "${listener%%://*}")" in
            PLAINTEXT|SASL_PLAINTEXT) probe_listener=${listener#*://}; break ;;
        esac
    done
    [ -n "$probe_listener" ] || probe_listener=$(first_listener "$listeners_setting")
    listen_host=$(host_of "$probe_listener")
    listen_port=$(port_of "$probe_listener")
    [ -n "$listen_host" ] || listen_host=0.0.0.0
elif [ -n "${KAFKA_LISTENERS:-}" ]; then
    address=$(first_listener "$KAFKA_LISTENERS")
    listen_host=$(host_of "$address")
    listen_port=$(port_of "$address")
    [ -n "$listen_host" ] || listen_host=0.0.0.0
fi

# Flags given as arguments override the environment; the health check must probe what kemu binds.
previous=
for argument in "$@"; do
    case "$previous" in
        --host) listen_host=$argument ;;
        --port) listen_port=$argument ;;
    esac
    case "$argument" in
        --host=*) listen_host=${argument#--host=} ;;
        --port=*) listen_port=${argument#--port=} ;;
    esac
    previous=$argument
done

# The health check probes the address kemu binds.
case "$listen_host" in
    0.0.0.0|"") probe_host=127.0.0.1 ;;
    ::) probe_host=::1 ;;
    *) probe_host=$listen_host ;;
esac
echo "$probe_host:$listen_port" > /tmp/kemu-healthcheck-address

# A port docker maps at random is known only once the container runs, so whoever starts it (as
# kemu.testcontainers does, like testcontainers' KafkaContainer) can write the advertised listener
# into the container afterwards; kemu starts when that file holds a complete line.
if [ -n "${KEMU_ADVERTISED_LISTENERS_FILE:-}" ]; then
    say "waiting for the advertised listener in $KEMU_ADVERTISED_LISTENERS_FILE"
    # As PID 1 the shell would ignore docker stop's SIGTERM.
    trap 'exit 143' TERM INT
    until [ -f "$KEMU_ADVERTISED_LISTENERS_FILE" ] && [ "$(wc -l < "$KEMU_ADVERTISED_LISTENERS_FILE")" -ge 1 ]; do
        sleep 0.02  # each wait here is added to KemuContainer.start()
    done
    trap - TERM INT
    KAFKA_ADVERTISED_LISTENERS=$(head -n 1 "$KEMU_ADVERTISED_LISTENERS_FILE")
fi

# A broker listening on every interface must still tell clients one name to reach it by; for
# `docker run -p 9092:9092` that is localhost, as in Kafka's own images.
advertised_host=localhost
advertised_port=$listen_port
if [ -n "$listeners_setting" ]; then
    advertised=${KAFKA_ADVERTISED_LISTENERS:-$(echo "$listeners_setting" | sed -e 's#://0\.0\.0\.0:#://localhost:#g' -e 's#://:#://localhost:#g')}
    set -- --override "listeners=$listeners_setting" --override "advertised.listeners=$advertised" "$@"
elif [ -n "${KAFKA_ADVERTISED_LISTENERS:-}" ]; then
    address=$(first_listener "$KAFKA_ADVERTISED_LISTENERS")
    advertised_host=$(host_of "$address")
    advertised_port=$(port_of "$address")
fi

data_dir=/var/lib/kemu/data
if [ -n "${KAFKA_LOG_DIRS:-}" ]; then
    data_dir=${KAFKA_LOG_DIRS%%,*}
fi

node_id=${KAFKA_NODE_ID:-${KAFKA_BROKER_ID:-}}

log_level=${KEMU_LOG_LEVEL:-${KAFKA_LOG4J_ROOT_LOGLEVEL:-}}
case "$log_level" in
    WARN|warn) log_level=WARNING ;;
    TRACE|trace) log_level=DEBUG ;;
    FATAL|fatal) log_level=CRITICAL ;;
esac

[ -z "${KEMU_BROKERS:-}" ] || set -- --brokers "$KEMU_BROKERS" "$@"
[ -z "${KEMU_RACKS:-}" ] || set -- --rack "$KEMU_RACKS" "$@"

# A test tool, so off unless asked for; bound to the listen host, so a published port reaches it.
[ -z "${KEMU_CONTROL_PORT:-}" ] || set -- --control-port "$KEMU_CONTROL_PORT" "$@"

# Given only when it differs, so that kemu's own default (the bound port) covers --port 0.
[ -n "$listeners_setting" ] || [ "$advertised_port" = "$listen_port" ] || \
    set -- --advertised-port "$advertised_port" "$@"

# Every other KAFKA_* variable is a broker setting, named as Kafka's images name them: drop the prefix,
# lower-case, "___" is "-", "__" is "_", "_" is "." (KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS ->
# group.initial.rebalance.delay.ms). kemu warns about the ones it does not know, as Kafka does.
for variable in $(env | sed -n 's/^\(KAFKA_[A-Z0-9_]*\)=.*/\1/p'); do
    case "$variable" in
        KAFKA_LISTENERS|KAFKA_ADVERTISED_LISTENERS|KAFKA_NODE_ID|KAFKA_BROKER_ID|KAFKA_LOG_DIRS) ;;
        KAFKA_LOG4J_*|KAFKA_HEAP_OPTS|KAFKA_OPTS|KAFKA_JMX_*|KAFKA_JVM_*|KAFKA_GC_LOG_OPTS|KAFKA_VERSION) ;;
        *)
            name=$(echo "${variable#KAFKA_}" | tr 'A-Z' 'a-z' | sed -e 's/___/-/g' -e 's/__/%/g' -e 's/_/./g' -e 's/%/_/g')
            value=$(printenv "$variable")
            set -- --override "$name=$value" "$@"
            ;;
    esac
done

mkdir -p "$data_dir"
if [ -n "$listeners_setting" ]; then
    # The listeners setting says where to listen; --host is then where the control endpoint binds.
    set -- --host "$listen_host" --data-dir "$data_dir" "$@"
else
    set -- --host "$listen_host" --port "$listen_port" --advertised-host "$advertised_host" --data-dir "$data_dir" "$@"
fi
[ -z "$node_id" ] || set -- --node-id "$node_id" "$@"
[ -z "$log_level" ] || set -- --log-level "$log_level" "$@"
exec kemu serve "$@"

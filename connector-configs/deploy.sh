#!/bin/sh
# deploy.sh: deploy Kafka Connect connector configs with curl, for machines without Python.
#
# Usage: deploy.sh [--url URL] [--user USER --password PASSWORD] [--dry-run] [--delete-missing] [--timeout SECONDS] PATH...
#
# The shell twin of `icefloe deploy` (which is the one to prefer when Python is there: it
# also prints the changed values, with secrets masked). For each connector config file,
# or every *.json file of a directory (sorted), it:
#   1. reads the connector's name and config from the file;
#   2. GETs /connectors/NAME/config and prints the keys that would be added (+), changed (~)
#      or removed (-): key names only, never values, so secrets stay out of CI logs;
#   3. PUTs /connectors/NAME/config only if something changes (a second run changes nothing);
#   4. with --delete-missing, DELETEs the worker's connectors that no PATH defines;
#   5. polls /connectors/NAME/status until the connector and all its tasks are RUNNING,
#      printing the trace of a FAILED connector or task.
# It uses only Kafka Connect's public REST API, so it works against `icefloe serve` and
# against a Kafka Connect worker alike.
#
# Requirements: a POSIX sh, curl, and the POSIX tools awk, sed, sort, mktemp. jq is NOT
# needed: the JSON is read by a small awk scanner below (strings with escapes, numbers,
# true/false, nested objects and arrays). It accepts the two forms icefloe reads:
#   {"name": "NAME", "config": {"key": "value", ...}}   a REST body (extra top-level keys ignored)
#   {"name": "NAME", "key": "value", ...}                a flat config map
# Config values must be strings, numbers or booleans (sent as given; Connect stores them as
# strings); a nested object, an array or null in the config is refused, naming the file.
# Comparing with the worker is textual after sorting the keys, so a value written with a
# \u escape in the file counts as changed once and is simply PUT again.
#
# Credentials: --user/--password or ICEFLOE_DEPLOY_USER/ICEFLOE_DEPLOY_PASSWORD; they reach
# curl through a private temporary config file, not its command line.
#
# Exit codes: 0 all deployed and RUNNING (or nothing to do); 1 a connector failed, was
# refused (Connect's message is printed), did not reach RUNNING in time, or the worker
# could not be reached; 2 bad arguments or config files (nothing is sent then).

set -u

URL=http://localhost:8083
USER_NAME=${ICEFLOE_DEPLOY_USER:-}
PASSWORD=${ICEFLOE_DEPLOY_PASSWORD:-}
TIMEOUT=120
DRY_RUN=0
DELETE_MISSING=0

usage() {
    sed -n '4p' "$0" | sed 's/^# //' >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case $1 in
        --url) [ $# -ge 2 ] || usage; URL=$2; shift 2 ;;
        --user) [ $# -ge 2 ] || usage; USER_NAME=$2; shift 2 ;;
        --password) [ $# -ge 2 ] || usage; PASSWORD=$2; shift 2 ;;
        --timeout) [ $# -ge 2 ] || usage; TIMEOUT=$2; shift 2 ;;
        --dry-run) DRY_RUN=1; shift ;;
        --delete-missing) DELETE_MISSING=1; shift ;;
        -h|--help) usage ;;
        --) shift; break ;;
        -*) echo "deploy.sh: unknown option $1" >&2; usage ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || usage
case $TIMEOUT in ''|*[!0-9]*) echo "deploy.sh: --timeout takes whole seconds" >&2; exit 2 ;; esac
if { [ -n "$USER_NAME" ] && [ -z "$PASSWORD" ]; } || { [ -z "$USER_NAME" ] && [ -n "$PASSWORD" ]; }; then
    echo "deploy.sh: --user and --password (or ICEFLOE_DEPLOY_USER/PASSWORD) go together" >&2
    exit 2
fi
URL=${URL%/}

umask 077
WORK=$(mktemp -d "${TMPDIR:-/tmp}/deploy.XXXXXX") || exit 2
trap 'rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM

# The JSON scanner. mode=config: a connector file -> line 1 the URL-encoded name, line 2 the
# name, then "key<TAB>value" per config entry (values as raw JSON string contents).
# mode=flat: a flat object -> "key<TAB>value" lines. mode=status: a ConnectorStateInfo ->
# line 1 RUNNING|FAILED|PAUSED|STOPPED|WAIT, line 2 a summary, then the traces of FAILED
# instances. mode=names: a JSON array of names -> "encoded<TAB>name" lines. mode=message:
# Connect's error body -> its message (or the raw text).
SCANNER='
function fail(msg) { print FILENAME ": " msg > "/dev/stderr"; failed = 1; exit 2 }
BEGIN { for (b = 1; b < 256; b++) ord[sprintf("%c", b)] = b }
{ text = text $0 "\n" }
END {
    if (failed) exit 2
    if (mode == "message") { if (!scan(1)) { printf "%s", text; exit 0 } ; emit_message(); exit 0 }
    scan(0)
    if (mode == "config") emit_config(); else if (mode == "flat") emit_flat()
    else if (mode == "names") emit_names(); else emit_status()
}
function path(   p, d) { p = key[1]; for (d = 2; d <= depth; d++) p = p SUBSEP key[d]; return p }
function value(raw, type,   p) { p = path(); val[p] = raw; typ[p] = type; order[++count] = p }
function scan(quiet,   n, i, c, j, ch, s, p) {
    n = length(text); depth = 0; count = 0; done = 0
    for (i = 1; i <= n; i++) {
        c = substr(text, i, 1)
        if (c == " " || c == "\t" || c == "\n" || c == "\r" || c == ":") continue
        if (done) { if (quiet) return 0; fail("not valid JSON (text after the object)") }
        if (depth == 0 && c != "{" && !(mode == "names" && c == "[")) { if (quiet) return 0; fail("must be a JSON object") }
        if (c == "\"") {
            for (j = i + 1; j <= n; j++) {
                ch = substr(text, j, 1)
                if (ch == "\\") { j++; continue }
                if (ch == "\"") break
            }
            if (j > n) { if (quiet) return 0; fail("not valid JSON (unterminated string)") }
            s = substr(text, i + 1, j - i - 1); i = j
            if (kind[depth] == "o" && wantkey[depth]) { key[depth] = s; wantkey[depth] = 0 } else value(s, "s")
            continue
        }
        if (c == "{" || c == "[") {
            if (depth > 0) { p = path(); container[p] = c; order[++count] = p }
            depth++; kind[depth] = (c == "{") ? "o" : "a"; wantkey[depth] = 1; key[depth] = (c == "[") ? 0 : ""
            continue
        }
        if (c == "}" || c == "]") { depth--; if (depth == 0) done = 1; continue }
        if (c == ",") { if (kind[depth] == "o") wantkey[depth] = 1; else key[depth]++; continue }
        for (j = i; j <= n && index(" \t\r\n,}]", substr(text, j, 1)) == 0; j++) ;
        value(substr(text, i, j - i), "b"); i = j - 1
    }
    if (depth != 0) { if (quiet) return 0; fail("not valid JSON (unbalanced brackets)") }
    return 1
}
function unescape(s,   out, i, c, e) {
    out = ""
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c != "\\") { out = out c; continue }
        e = substr(s, ++i, 1)
        out = out (e == "n" ? "\n" : e == "t" ? "\t" : e == "r" ? "" : e == "u" ? "\\u" : e)
    }
    return out
}
function urlencode(s,   out, i, c) {
    out = ""
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c ~ /[A-Za-z0-9._~-]/) out = out c; else out = out sprintf("%%%02X", ord[c])
    }
    return out
}
function emit_config(   wrapped, prefix, name, inner, i, p, parts, m, k, names, seen) {
    wrapped = (container["config"] == "{")
    name = (typ["name"] == "s") ? unescape(val["name"]) : ""
    if (wrapped) {
        inner = ("config" SUBSEP "name") in val ? unescape(val["config" SUBSEP "name"]) : ""
        if (name != "" && inner != "" && name != inner)
            fail("Connector name configuration (" inner ") does not match connector name (" name ")")
        if (name == "") name = inner
    }
    if (name == "") fail("the connector has no name (set \"name\" in the file)")
    print urlencode(name); print name
    for (i = 1; i <= count; i++) {
        m = split(order[i], parts, SUBSEP)
        if (wrapped && (parts[1] != "config" || m == 1)) continue
        k = wrapped ? parts[2] : parts[1]
        if (m > (wrapped ? 2 : 1) || order[i] in container) fail("the value of " k " is not a string")
        if (typ[order[i]] == "b" && val[order[i]] == "null") fail("the value of " k " is null")
        if (k == "name") seen = 1
        print k "\t" val[order[i]]
    }
    if (!seen) print "name\t" name
}
function emit_flat(   i) {
    for (i = 1; i <= count; i++) if (!index(order[i], SUBSEP) && !(order[i] in container)) print order[i] "\t" val[order[i]]
}
function emit_names(   i, name) {
    for (i = 1; i <= count; i++) if (typ[order[i]] == "s") { name = unescape(val[order[i]]); print urlencode(name) "\t" name }
}
function emit_message() {
    if ("message" in val) print unescape(val["message"]); else printf "%s", text
}
function trace(who, p,   t) {
    print who " FAILED on " unescape(val[p SUBSEP "worker_id"]) ":"
    t = ((p SUBSEP "trace") in val) ? unescape(val[p SUBSEP "trace"]) : "(no trace)"
    sub(/\n+$/, "", t); gsub(/\n/, "\n    ", t)
    print "    " t
}
function emit_status(   state, t, n, all, summary, verdict) {
    state = val["connector" SUBSEP "state"]
    summary = "connector " state; all = 1; verdict = ""
    for (t = 0; ("tasks" SUBSEP t SUBSEP "state") in val; t++) {
        summary = summary ", task " val["tasks" SUBSEP t SUBSEP "id"] " " val["tasks" SUBSEP t SUBSEP "state"]
        if (val["tasks" SUBSEP t SUBSEP "state"] == "FAILED") verdict = "FAILED"
        if (val["tasks" SUBSEP t SUBSEP "state"] != "RUNNING") all = 0
    }
    if (t == 0) summary = summary ", no tasks"
    if (state == "FAILED") verdict = "FAILED"
    if (verdict == "") verdict = (state == "PAUSED" || state == "STOPPED") ? state : (state == "RUNNING" && t > 0 && all) ? "RUNNING" : "WAIT"
    print verdict; print summary
    if (verdict != "FAILED") return
    if (state == "FAILED") trace("connector", "connector")
    for (t = 0; ("tasks" SUBSEP t SUBSEP "state") in val; t++)
        if (val["tasks" SUBSEP t SUBSEP "state"] == "FAILED") trace("task " val["tasks" SUBSEP t SUBSEP "id"], "tasks" SUBSEP t)
}
'

scan() {  # scan MODE FILE
    LC_ALL=C awk -v mode="$1" "$SCANNER" "$2"
}

# curl's credentials come from a private file, not its arguments (which `ps` shows).
: > "$WORK/curlrc"
if [ -n "$USER_NAME" ]; then
    escaped=$(printf '%s:%s' "$USER_NAME" "$PASSWORD" | sed 's/\\/\\\\/g; s/"/\\"/g')
    printf 'user = "%s"\n' "$escaped" > "$WORK/curlrc"
fi

# api METHOD PATH [BODY_FILE]: the HTTP status on stdout, the body in $WORK/body.
api() {
    if [ $# -ge 3 ]; then
        set -- "$1" "$2" --data-binary "@$3" -H 'Content-Type: application/json'
    fi
    method=$1; path=$2; shift 2
    if ! code=$(curl -sS -K "$WORK/curlrc" -o "$WORK/body" -w '%{http_code}' -X "$method" \
            -H 'Accept: application/json' "$@" "$URL$path" 2> "$WORK/curl.err"); then
        echo "deploy.sh: Cannot reach the Connect worker at $URL: $(sed -n '1s/^curl: ([0-9]*) //p' "$WORK/curl.err")" >&2
        exit 1
    fi
    echo "$code"
}

refuse() {  # refuse WHAT STATUS: print the worker's answer and remember the failure
    echo "$1: refused by the worker ($2):"
    scan message "$WORK/body" | sed 's/^/    /'
    FAILURES="$FAILURES $1"
}

# Pass 1: read every file, so a bad one stops the deploy before the worker is touched.
: > "$WORK/files"
for arg in "$@"; do
    if [ -d "$arg" ]; then
        found=0
        for f in "$arg"/*.json; do
            [ -f "$f" ] && { printf '%s\n' "$f" >> "$WORK/files"; found=1; }
        done
        [ $found = 1 ] || { echo "deploy.sh: $arg: no *.json connector configs in this directory" >&2; exit 2; }
    elif [ -f "$arg" ]; then
        printf '%s\n' "$arg" >> "$WORK/files"
    else
        echo "deploy.sh: $arg: no such file or directory" >&2; exit 2
    fi
done
n=0
: > "$WORK/names"
while IFS= read -r file; do
    n=$((n + 1))
    scan config "$file" > "$WORK/parsed.$n" || exit 2
    name=$(sed -n 2p "$WORK/parsed.$n")
    previous=$(awk -F '\t' -v n="$name" '$1 == n { print $2; exit }' "$WORK/names")
    if [ -n "$previous" ]; then
        echo "deploy.sh: $file: connector $name is already defined in $previous" >&2; exit 2
    fi
    printf '%s\t%s\n' "$name" "$file" >> "$WORK/names"
done < "$WORK/files"

# Pass 2: compare, PUT what changes, then wait for RUNNING.
FAILURES=""
DEPLOYED=""
CHANGES=0
i=0
while [ $i -lt $n ]; do
    i=$((i + 1))
    encoded=$(sed -n 1p "$WORK/parsed.$i")
    name=$(sed -n 2p "$WORK/parsed.$i")
    sed 1,2d "$WORK/parsed.$i" | LC_ALL=C sort > "$WORK/want"
    code=$(api GET "/connectors/$encoded/config") || exit 1
    case $code in
        200) scan flat "$WORK/body" | LC_ALL=C sort > "$WORK/have" || exit 1; action=update ;;
        404) : > "$WORK/have"; action=create ;;
        *) echo "deploy.sh: the worker at $URL answered $code: $(scan message "$WORK/body")" >&2; exit 1 ;;
    esac
    LC_ALL=C awk -F '\t' 'FILENAME == ARGV[1] { have[$1] = $2; next }
        { want[$1] = 1; if (!($1 in have)) print "  + " $1; else if (have[$1] != $2) print "  ~ " $1 }
        END { for (k in have) if (!(k in want)) print "  - " k }' "$WORK/have" "$WORK/want" \
        | LC_ALL=C sort -k2 > "$WORK/diff"
    if [ ! -s "$WORK/diff" ]; then
        echo "$name: no change"
        DEPLOYED="$DEPLOYED $i"
        continue
    fi
    CHANGES=$((CHANGES + 1))
    echo "$name: $action (keys only; values are not shown)"
    cat "$WORK/diff"
    [ $DRY_RUN = 1 ] && continue
    # The body: the entries in the file's order, each value re-quoted as a JSON string.
    sed 1,2d "$WORK/parsed.$i" | LC_ALL=C awk -F '\t' 'BEGIN { printf "{" } { printf "%s\"%s\":\"%s\"", (NR > 1 ? "," : ""), $1, substr($0, length($1) + 2) }
        END { print "}" }' > "$WORK/put.json"
    code=$(api PUT "/connectors/$encoded/config" "$WORK/put.json") || exit 1
    case $code in
        200) echo "$name: updated"; DEPLOYED="$DEPLOYED $i" ;;
        201) echo "$name: created"; DEPLOYED="$DEPLOYED $i" ;;
        *) refuse "$name" "$code" ;;
    esac
done

if [ $DELETE_MISSING = 1 ]; then
    code=$(api GET /connectors) || exit 1
    if [ "$code" != 200 ]; then
        echo "deploy.sh: the worker at $URL answered $code: $(scan message "$WORK/body")" >&2; exit 1
    fi
    scan names "$WORK/body" > "$WORK/existing" || exit 1
    LC_ALL=C sort -t "$(printf '\t')" -k2 "$WORK/existing" > "$WORK/existing.sorted"
    while IFS="$(printf '\t')" read -r encoded name; do
        if awk -F '\t' -v n="$name" '$1 == n { found = 1 } END { exit !found }' "$WORK/names"; then continue; fi
        echo "$name: delete (no PATH defines it)"
        CHANGES=$((CHANGES + 1))
        [ $DRY_RUN = 1 ] && continue
        code=$(api DELETE "/connectors/$encoded") || exit 1
        case $code in
            204) echo "$name: deleted" ;;
            *) refuse "$name" "$code" ;;
        esac
    done < "$WORK/existing.sorted"
fi

if [ $DRY_RUN = 1 ]; then
    if [ $CHANGES -gt 0 ]; then echo "Dry run: $CHANGES change(s) not applied."; else echo "Dry run: nothing to change."; fi
    exit 0
fi
[ $CHANGES -gt 0 ] || [ -n "$FAILURES" ] || echo "Nothing to change."

for i in $DEPLOYED; do
    encoded=$(sed -n 1p "$WORK/parsed.$i")
    name=$(sed -n 2p "$WORK/parsed.$i")
    deadline=$(( $(date +%s) + TIMEOUT ))
    summary="no status yet"
    while :; do
        code=$(api GET "/connectors/$encoded/status") || exit 1
        if [ "$code" = 200 ]; then
            scan status "$WORK/body" > "$WORK/status" || exit 1
            verdict=$(sed -n 1p "$WORK/status")
            summary=$(sed -n 2p "$WORK/status")
            case $verdict in
                RUNNING) echo "$name: $summary"; break ;;
                PAUSED|STOPPED) echo "$name: connector is $verdict; deploy leaves it so (PUT .../resume to run it)"; break ;;
                FAILED) echo "$name: $summary"; sed 1,2d "$WORK/status"; FAILURES="$FAILURES $name"; break ;;
            esac
        elif [ "$code" != 404 ]; then
            refuse "$name" "$code"; break
        fi
        if [ "$(date +%s)" -ge "$deadline" ]; then
            echo "$name: not RUNNING after ${TIMEOUT}s: $summary"; FAILURES="$FAILURES $name"; break
        fi
        sleep 1
    done
done

if [ -n "$FAILURES" ]; then
    echo "Failed:$FAILURES"
    exit 1
fi
exit 0

# A "program" for the interrupt tests: records its pid and those of the processes it starts in the
# file $PIDS, one per line. $1 says what it does:
#   hang (default)  a grandchild that starts its own session, one that double-forks into its own
#                   session, then waits
#   run CMD...      runs CMD (the real profile) in its place
#   quick | fail    exits 0 / prints to stderr and exits 3
#   flood           prints 200,000 lines and exits
#   escape          starts both escapees, then exits after 0.3 s (they are left behind)
echo $$ >> "$PIDS"
escapees() {
  setsid sleep 300 & echo $! >> "$PIDS"
  ( setsid sh -c 'sleep 300 & echo $! >> "$PIDS"; wait' & )
}
case "${1:-hang}" in
  run) shift; exec "$@" ;;
  quick) exit 0 ;;
  fail) echo "bad input" >&2; exit 3 ;;
  flood) seq 1 200000; exit 0 ;;
  escape) escapees; sleep 0.3; exit 0 ;;
  *) escapees; sleep 300 ;;
esac

# Stops the hook's process group PGID: SIGTERM, then SIGKILL to whatever of it is still
# there after TENTHS tenths of a second (a hook may ignore SIGTERM).
kill -TERM -"$PGID" 2>/dev/null || exit 0
i=0
while kill -0 -"$PGID" 2>/dev/null && [ $i -lt "$TENTHS" ]; do sleep 0.1; i=$((i + 1)); done
kill -KILL -"$PGID" 2>/dev/null
:

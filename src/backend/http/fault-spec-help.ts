// The fault grammar as users read it (sbx daemon run --help, the man page). Kept
// apart from faults.ts, with no imports, so the CLI's help costs no backend code at
// start-up; parseFaultSpec in faults.ts is what the text describes.

export const FAULT_SPEC_HELP = `Fault injection: SPEC is comma-separated rules ROUTE:FAULT[:WHEN]
  ROUTE   execute | executions.get | executions.list | executions.stream |
          executions.events | executions.output | executions.cancel |
          sandbox.create | sandbox.get | sandbox.delete | sandboxes.list |
          process.start | processes.list | process.get | process.result |
          process.logs | process.stdin | process.signal | process.stop |
          jobs.submit | jobs.list | jobs.get | jobs.cancel |
          *   (* = every route the fault applies to; never health, openapi)
  FAULT   not_started     503 not_started {reason: fault_injected,
                          retry_after_ms: 2000} and Retry-After: 2; nothing
                          runs, nothing is stored
          unconfirmed     (execute) the command runs to completion, then 409
                          execution_result_unconfirmed with details.execution_id
                          and details.idempotency_key; the stored record stays
                          readable
          record_pending  (execute, executions.get) the command runs; the answer
                          has record_pending: true; after execute, reads of it
                          say so for 3 s more (its record is stored as it is)
          stream_lost     (execute, executions.get) the command runs; the answer
                          is outcome unknown, system_error exec_stream_lost, no
                          exit_code or signal; after execute, every read of it
                          from this backend says so too (its log: incomplete)
          drop            the request is admitted (a command starts, jobs are
                          admitted), then the connection is closed without an
                          answer; what it started completes and is readable
          delay=DUR       wait DUR (500ms, 2s, 1m) before handling; a mutation
                          waits holding its Idempotency-Key, so the same key
                          meanwhile gets 409 request_in_progress; combines with
                          one other fault
          bad_gateway     502 with an HTML page; nothing runs
          bare_503        503 text/plain; nothing runs
          internal_error  500 internal_error, as a bug in the backend would
                          answer; nothing runs
          malformed       the request is handled (a command runs); 200 with a
                          non-JSON body
          drop_field=NAME the request is handled; a successful JSON answer
                          lacks its field NAME (an answer off the contract, to
                          prove that its check fails)
          in_progress     (mutations) 409 request_in_progress; nothing runs
          no_exit         (execute, executions.get) the command runs; 200 with
                          outcome failed and neither exit_code nor signal (a
                          stream: in its exit event)
  Stream faults (execute with stream: true, executions.stream); one combines
  with a delay and one other fault:
          cut_after=N     close the connection after N frames, without the end
                          event
          cut_in_frame[=N]  write half of the last frame (the end event), or of
                          frame N, then close the connection
          reset           fold the first run of output events sent into a reset
                          event carrying the snapshot, as if the log had been
                          trimmed
  A streamed execute answers unconfirmed with the 409 at once (the command runs
  on), and record_pending and stream_lost in its exit event.
  WHEN    always (default) | once | times=N | p=P (probability 0 < P <= 1; a
          seed makes it repeatable)
  The first rule that fires for a request wins (a delay, a stream fault and one
  other fault may all fire).
  Examples: execute:unconfirmed:once,executions.get:delay=2s:p=0.5
            executions.stream:cut_after=3:once`;

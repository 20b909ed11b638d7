// Command bench measures the client-side CPU cost of TDS traffic: go-mssqldb with its own TLS
// versus go-mssqldb through the bridge (package mssqlbridge), each with TLS and in plaintext, on
// large values, on the workloads applications run (small parameterized round trips, many rows,
// uploads, bulk copy), and on the heap an idle pooled connection holds; plus a transport-only
// comparison (plain tls.Conn versus the bridge, through its coalescing Reader and with the
// tls.Conn read directly) and the floor (AES-128-GCM open alone, a plain
// loopback TCP read). bench/README.md describes the method, the targets and every column.
//
// Run it with `make bench` (that is `go run ./bench`). With no flags it starts the servers it
// needs in a child process (the same executable re-run in a hidden child mode), so the client CPU
// it reports (getrusage RUSAGE_SELF on Unix, GetProcessTimes on Windows) is the client's alone.
// Measurements run in rounds, group by group (driver, then transport, then floor); every round
// visits every cell of the group and, inside a cell, every arm in turn, in orders that give
// every arm every position and every predecessor equally often (a Williams design, armOrder), so
// that slow drifts of the machine and what one sample leaves for the next hit every arm alike.
// Figures are medians over the rounds with their spread; a ratio candidate/baseline is the median
// of the per-round paired ratios, with the number of rounds in which the candidate was cheaper
// and the two-sided sign-test p-value of that count, adjusted by Holm's method over every judged
// ratio of the run. One judgement per ratio (judge) places it in the verdict (saves, no
// difference, makes worse: dearer with Holm-adjusted p < 0.05, too few rounds), and the targets,
// the decided goals, read their outcome from it, so the Targets section and the verdict cannot
// disagree: "not worse" is MET unless the verdict says "makes worse", whatever the median; a gain
// is MET when the verdict says "saves" within the target's limit.
//
// Output: a table on stdout, a progress line on stderr, and optionally -json FILE (every sample)
// and -plot FILE.svg (grouped bars by cell and arm: client CPU per MiB of the value cells, per
// operation of the workload cells relative to native TLS, per MB of the transport cells).
// Package internal/report holds the result types and draws all three; internal/stats holds the
// statistics.
//
// Modes:
//
//	-mode driver     go-mssqldb native vs bridged, TLS and plaintext: 1 MiB nvarchar(max) and
//	                 varbinary(max) at packet sizes 4096 and 16384, the workload cells, a TLS
//	                 record-size sweep, the varbinary value with every sample in a client
//	                 process of its own (fresh.go), and the idle heap per pooled connection
//	-mode transport  tls.Conn vs the two bridge arms by record size and read pattern, and the floor
//	-mode all        both (the default)
//	-mode faults     not a CPU measurement: the fault table (faults.go), the ways a server or
//	                 the network misbehaves, and a healthy connection a transport must not drop
//	                 for one, each through database/sql with go-mssqldb's own
//	                 transport and with the tdsbridge driver; per scenario and transport the
//	                 bound, the time to return, whether the application saw an error and its
//	                 first line; -fault-repeat N counted queries per idle-connection cell
//	                 (default 5; 100 for the target run); -json FILE writes every call
//	-dsn DSN         the driver comparison against a real server (also MSSQL_DSN)
//	-control         with -mode driver: a control run, every bridged arm a second native
//	                 connection, so that each ratio shows the noise alone (see armSpecs)
//	-serve           run the embedded tdstest server standalone (-addr, -encrypt, -user,
//	                 -password, -record-size) and print its address and DSN
//
// Child processes: "-child sample" measures one sample of one driver arm in a process of its own
// and prints it (the fresh-process cells); "-child tdstest" runs one tdstest server per TLS
// record size with the encryption setting OFF (so encrypt=true gets full TLS and
// encrypt=disable none from the same server); "-child faults" runs one tdstest server per cell
// of the fault table, each with its scenario's Faults, and prints each cell's DSN; "-child
// streams" runs the transport senders (plain TCP, plain TLS, and TLS whose handshake runs
// through a bridge in the server role). A child prints "key value" lines and "ready" on stdout,
// and serves until its stdin reaches EOF; the parent closes it at the end (and the pipe closes
// if the parent dies), then kills the child if it has not exited in 5 s. The -child argument is
// not a flag of the command line; it must come first.
package main

// Package probe is `lnk sandbox check`: the probes that try, from inside
// the real sandbox, each way out the sandbox must keep closed, with
// positive controls (a granted folder reads, a listed command runs) so a
// broken probe cannot pass.
//
// List makes the probes for a sandbox's grants, outside; the CLI runs
// `lnk sandbox probe SPEC` inside the sandbox, which calls Run and prints
// the results as JSON; Table and Failed judge them outside.
//
// # Security
//
// Holds nothing. Inside, it only tries: every attempt that succeeds is
// undone (a file it made is removed, a process it started is killed and
// waited for). It never writes into a folder it was not granted, never
// makes a .git where none was, and never sends traffic off the machine:
// its network probes name only loopback and this machine's own address,
// where the check listens.
package probe

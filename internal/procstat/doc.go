// Package procstat reads what Link needs to know a process again later:
// the machine's boot ID (/proc/sys/kernel/random/boot_id) and a process's
// state, parent, group and start time from /proc/PID/stat. A pid and a process
// group ID are reused once their process is gone; the pair (boot ID,
// start time) is not, so a record holding both names one process for
// good.
//
// # Security
//
// Holds nothing. Trusts the kernel's /proc; a process's own name in its
// stat, which it chooses, is skipped (the fields are read after its last
// ')'). Refuses a short or malformed stat rather than guess.
package procstat

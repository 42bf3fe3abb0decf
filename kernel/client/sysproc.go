package client

import "syscall"

// unixSysProcAttr puts a started kernel in a session of its own, so the
// terminal's signals (Ctrl-C in the shell that ran lnk) do not reach it.
var unixSysProcAttr = syscall.SysProcAttr{Setsid: true}

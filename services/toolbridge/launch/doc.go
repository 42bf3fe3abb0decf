// Package launch builds the one command that starts a tool's server,
// for the tool bridge (services/toolbridge) and a shared tool's hub
// (services/toolbridge/hub) alike.
//
// # Security
//
// The program is found only by an absolute path or on the definition's
// own PATH (its environment snapshot), never on the bridge's: a bare
// name its own PATH does not hold is refused, not looked up where the
// bridge runs, so which program runs is the definition's alone. A
// relative path is refused too (it would be relative to whatever folder
// the resolver ran in). The server runs in /, with exactly the
// environment the caller gives, in a process group of its own, killed
// (SIGKILL) if the process that started it dies.
package launch

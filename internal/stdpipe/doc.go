// Package stdpipe reads and writes Link's own pipes (the file tool's:
// serve's stdio and its child's, apply's stdio; Link Web's stdio) without entering the Go runtime's
// system call path: a [Pipe] is a non-blocking fd waited on in the
// poller, each read or write one raw system call; [Pipe.Grow] enlarges
// a pipe's buffer. It is a package of its
// own so that apply, the side that runs in the sandbox, links it without
// serve's MCP server.
package stdpipe

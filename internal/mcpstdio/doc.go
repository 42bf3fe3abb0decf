// Package mcpstdio is Link's one MCP stdio transport, for the servers it
// runs on its own pipes (the file tool's serve, Link Web): one JSON-RPC
// message a line each way, as the protocol says, over [stdpipe.Pipe]s.
// Each client line is decoded once, by the go-sdk's own decoder
// ([jsonrpc.DecodeMessage]), where the go-sdk's stdio transport scans
// it three times and hands it across a goroutine; a result the server
// encoded already is written as it is, framed, not compacted again (a
// page or a file's text may make it megabytes); each message is one
// write, and a pipe on stdout is grown to 256 KiB ([Stdio]) so a large
// answer's write need not wait for the client to drain the kernel's
// default 64 KiB. Where stdin or stdout is not a pipe or socket (a
// terminal, a file) it is the go-sdk's [mcp.IOTransport].
//
// A server may hand it its [Tools] ([Transport.SetFast]): a plain
// tools/call of one of them is then answered on the fast path, without
// the go-sdk server, to the same bytes ([fastCalls]); and a number of
// calls at once ([Transport.SetMaxCalls], [Gate]): no line is read while
// that many calls, the fast path's and the go-sdk's, are unanswered.
//
// A client of a tool server reads its answer to a tools/call with
// [ReadAnswer]: a line in the plain shape Link's servers write (one
// text) on a fast path that decodes its text once
// ([mcptext.DecodeString]), any other line by encoding/json.
//
// # Security
//
// It holds nothing. It trusts nothing the client writes: a line past
// [mcp.DefaultMaxLineLength], a batch, or a line that is not one
// JSON-RPC message ends the session, as the go-sdk's own transport
// does (FuzzRead). What it writes is the go-sdk's bytes for the same
// message (TestStdioTransportWrites, FuzzAppendResponse). The fast path
// refuses nothing: a line it is not sure of is the go-sdk's, and a line
// it takes is one the go-sdk decodes to the same call (FuzzPlainCall,
// a differential target against the go-sdk's decoder; its JSON check is
// jsonscan.Valid, held to encoding/json's by FuzzValid). ReadAnswer trusts nothing
// a server answers: it refuses a line a reader might take two ways (a key
// twice or in another case, members past JSON-RPC's at the top, an id a
// float64 does not hold exactly, more after the object), and its fast
// path refuses exactly what its strict path refuses and reads the same
// answer (FuzzReadAnswer, a differential target, which also holds the
// strict path's values to encoding/json's).
package mcpstdio

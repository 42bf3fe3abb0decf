// Package mcpstdio is Link's one MCP stdio transport, for the servers it
// runs on its own pipes (the file tool's serve, Link Web): one JSON-RPC
// message a line each way, as the protocol says, over [stdpipe.Pipe]s.
// Each client line is decoded once, by the go-sdk's own decoder
// ([jsonrpc.DecodeMessage]), where the go-sdk's stdio transport scans
// it three times and hands it across a goroutine; a result the server
// encoded already is written as it is, framed, not compacted again (a
// page or a file's text may make it megabytes); each message is one
// write. Where stdin or stdout is not a pipe or socket (a terminal, a
// file) it is the go-sdk's [mcp.IOTransport].
//
// A server may hand it a [Taker], offered each line before the go-sdk
// decodes it (the file tool's fast path for a plain tools/call).
//
// # Security
//
// It holds nothing. It trusts nothing the client writes: a line past
// [mcp.DefaultMaxLineLength], a batch, or a line that is not one
// JSON-RPC message ends the session, as the go-sdk's own transport
// does (FuzzRead). What it writes is the go-sdk's bytes for the same
// message (TestStdioTransportWrites, FuzzAppendResponse).
package mcpstdio

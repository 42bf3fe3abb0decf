package proto

import "lnk.dev/lnk/internal/wire"

// A start's tool bridge (kernel/start_bridge.go): for a start the kernel
// compiled whose grants name tools, on the connection that made it and
// after its ask broker (RunAsk), the kernel starts lnk-toolbridge,
// confined, as its child. The bridge is handed its channel to the
// kernel, the receiving end of the proxy's tool-route channel (which the
// kernel hands the proxy at RunProxy, never the caller), a channel to the
// start's ask broker and the tools' definitions folder; the caller is
// told only the route the sandbox reaches its tools at.
var RunBridge = wire.Spec{Type: 42, Name: "run-bridge", States: wire.In(StateServing)}

// RunBridgeRequest asks for the tool bridge of an agent's start.
type RunBridgeRequest struct {
	Agent    string `json:"agent"`
	Start    uint64 `json:"start"`
	Degraded bool   `json:"degraded,omitempty"`
}

// RunBridgeReply is the route the sandbox reaches its tools at through
// its proxy, "/_link/s/<secret>/mcp/": it goes only into the sandbox's
// environment, never into a log.
type RunBridgeReply struct {
	Route string `json:"route"`
}

// The bridge's requests to the kernel, on its channel (fd 3): a server
// for one tool of the start's grants, started by the kernel through the
// one launcher, outside every sandbox, its stdio handed back; or, for a
// shared tool, a connection to its hub. The tool must be one the start's
// compiled grants name, its definition not shared for ToolStart and
// shared for ToolDial: anything else is refused, and logged once.
var (
	// ToolStart's reply carries the server's stdin (write end), stdout
	// and stderr (read ends), and its life: the write end of a pipe the
	// kernel reads, whose close (the bridge's, or its death) has the
	// kernel kill the server's process group and reap it.
	ToolStart = wire.Spec{Type: 1, Name: "tool-start", ReplyFDs: 4, States: wire.AnyState}
	// ToolDial's reply carries the connection to the shared tool's hub.
	ToolDial = wire.Spec{Type: 2, Name: "tool-dial", ReplyFDs: 1, States: wire.AnyState}
)

// ToolRequest names the tool of the start's grants whose server the
// bridge needs.
type ToolRequest struct {
	Tool string `json:"tool"`
}

// ToolReply is the digest of the definition the server was started
// from (the bridge's session runs as that one, and ends once another is
// read), and whether it is a tool at a URL (Link's own client,
// lnk-mcp-remote, given a grace to end its remote session).
type ToolReply struct {
	Digest string `json:"digest"`
	URL    bool   `json:"url,omitempty"`
}

// BridgeConfig is what lnk-toolbridge reads on its stdin: the start's
// tools and limits as the kernel compiled and read them, never anything
// a sandbox can write. Secret is the route's, never logged.
type BridgeConfig struct {
	Home    string                `json:"home"`
	Agent   string                `json:"agent"`    // the agent the sandbox runs for (questions)
	LogName string                `json:"log_name"` // the name its lines are logged under (a harness's own)
	Sandbox string                `json:"sandbox"`  // the sandbox's name, as the ask broker counts it
	Secret  string                `json:"secret"`
	Grants  map[string]BridgeTool `json:"grants"`
	// OwnID and OwnName, for Link Harness's own sandbox, are the agent
	// whose own run and file tools its grants name; Bin is the folder of
	// Link's programs those tools' definitions run. Empty otherwise.
	OwnID   string `json:"own_id,omitempty"`
	OwnName string `json:"own_name,omitempty"`
	Bin     string `json:"bin,omitempty"`
	Path    string `json:"path,omitempty"` // their servers' PATH, the kernel's
	// The limits of Link's settings: tool_sessions, tool_idle (a Go
	// duration), tool_starts.
	Sessions int    `json:"sessions"`
	Idle     string `json:"idle"`
	Starts   int    `json:"starts"`
}

// BridgeTool is one tool's grant: the calls let through without asking,
// or all of them.
type BridgeTool struct {
	Allow   []string `json:"allow"`
	AskNone bool     `json:"ask_none,omitempty"`
}

// BridgeEvent is one line lnk-toolbridge writes on its stderr for the
// audit log: the tool, the call's name (the method, or a tools/call's
// name) and its outcome ("passed", "refused: why", …), never a call's
// arguments or answer. The kernel reads it strictly and writes the line
// itself, with the start's agent and sandbox.
type BridgeEvent struct {
	Tool    string `json:"tool"`
	Call    string `json:"call"`
	Outcome string `json:"outcome"`
}

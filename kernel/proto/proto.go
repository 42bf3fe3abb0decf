// Package proto is what the lnk CLI (and every service) and the kernel
// say to each other: the request types and their bodies, as the
// [wire] record protocol carries them on the kernel's socket.
//
// Each request's body is a Go struct decoded strictly by [wire.Unmarshal]
// on the kernel's side: a missing or unknown field closes the connection.
// Fd counts are part of each [wire.Spec].
//
// # Security
//
// It is data only: it holds nothing and may do nothing. Everything in a
// body is untrusted by the kernel until checked; a handle is 32 lowercase
// hex digits (128 random bits) and proves nothing by its form alone.
package proto

import (
	"encoding/json"
	"errors"

	"lnk.dev/lnk/internal/wire"
)

// SocketName is the kernel's socket in ~/.lnk/run.
const SocketName = "kernel.sock"

// ErrRunning says a kernel already serves this owner; the kernel's
// refusal of a second one carries its text, which the client matches.
var ErrRunning = errors.New("a kernel is already running for this user")

// States of a kernel connection.
const (
	StateServing  wire.State = 0 // the kernel takes requests
	StateDraining wire.State = 1 // SIGTERM came: requests are answered "stopping"
)

// The kernel's requests. Names pair with the kernel's handlers
// (kernel.handlePing answers Ping, …).
var (
	Ping   = wire.Spec{Type: 1, Name: "ping", States: wire.In(StateServing)}
	Status = wire.Spec{Type: 2, Name: "status", States: wire.In(StateServing)}
	Stop   = wire.Spec{Type: 3, Name: "stop", States: wire.In(StateServing)}
	Start  = wire.Spec{Type: 4, Name: "start", States: wire.In(StateServing)}
	End    = wire.Spec{Type: 5, Name: "end", States: wire.In(StateServing)}
	Check  = wire.Spec{Type: 6, Name: "check", States: wire.In(StateServing)}
	Read   = wire.Spec{Type: 7, Name: "read", ReplyFDs: 1, States: wire.In(StateServing)}
	Write  = wire.Spec{Type: 8, Name: "write", FDs: 1, States: wire.In(StateServing)}
	// Hold is served only by a kernel started with LNK_KERNEL_TESTING=1:
	// it writes one byte to the socket it carries, then waits for that
	// socket's end, so a test can hold a request in flight by an event.
	Hold = wire.Spec{Type: 9, Name: "hold", FDs: 1, States: wire.In(StateServing)}
	// BrokerHold and BrokerFDs are served only with LNK_KERNEL_TESTING=1
	// by a kernel running a broker named "test": the first passes its fd
	// to the broker's hold (a request in flight in a broker, held by an
	// event); the second asks which fds the broker inherited.
	BrokerHold = wire.Spec{Type: 10, Name: "broker-hold", FDs: 1, States: wire.In(StateServing)}
	BrokerFDs  = wire.Spec{Type: 11, Name: "broker-fds", States: wire.In(StateServing)}
)

// The test broker's own requests (see BrokerHold).
var (
	TestBrokerFDs  = wire.Spec{Type: 1, Name: "fds", States: wire.AnyState}
	TestBrokerHold = wire.Spec{Type: 2, Name: "hold", FDs: 1, States: wire.AnyState}
)

// FDsReply lists the fds a broker inherited, as "0,1,2,3".
type FDsReply struct {
	FDs string `json:"fds"`
}

// Error codes in a [wire.Error] from the kernel.
const (
	CodeRefused  = "refused"  // a rule refused it (unknown, revoked or another agent's handle, …)
	CodeMissing  = "missing"  // the agent or start does not exist
	CodeStopping = "stopping" // the kernel is stopping
	CodeBroker   = "broker"   // the broker failed or died mid-request
	CodeFailed   = "failed"   // anything else
)

// Empty is the body of a request or reply that carries nothing.
type Empty struct{}

// StatusReply is what `lnk kernel status` shows.
type StatusReply struct {
	PID      int          `json:"pid"`
	UID      int          `json:"uid"`
	Socket   string       `json:"socket"`
	Started  string       `json:"started"`
	Caps     int          `json:"caps"`
	Starts   []StartInfo  `json:"starts"`
	Brokers  []BrokerInfo `json:"brokers"`
	Requests uint64       `json:"requests"`
}

// StartInfo is one agent's running start.
type StartInfo struct {
	Agent string `json:"agent"`
	Start uint64 `json:"start"`
	Caps  int    `json:"caps"`
	// PID is the start's sandbox (its bubblewrap) once lnk handed the
	// kernel its pidfd (Attach); 0 before. For an unconfined start it is
	// the command itself, which runs with no sandbox.
	PID int `json:"pid"`
	// Unconfined marks a harness's run with the agent's sandbox off
	// (StartRequest.Unconfined): its command runs beside the kernel's
	// proxy with no sandbox.
	Unconfined bool `json:"unconfined,omitempty"`
}

// BrokerInfo is one broker the kernel runs.
type BrokerInfo struct {
	Name     string `json:"name"`
	PID      int    `json:"pid"`
	Restarts int    `json:"restarts"`
}

// StartRequest turns an agent's compiled grants into capabilities bound
// to a new start.
// The folders are caps.Compiled's, which the caller compiled and checked.
type StartRequest struct {
	Agent string `json:"agent"`
	// AgentID is the agent's 128-bit ID in hex (caps.Compiled.AgentID);
	// with it the key broker makes the agent's key for this start.
	AgentID string   `json:"agent_id,omitempty"`
	Folders []Folder `json:"folders"`
	// Compile has the kernel compile the agent's grants itself (caps,
	// from the agent's Config/sandbox.toml and its harness's layer);
	// Folders and AgentID must then be empty.
	Compile bool `json:"compile,omitempty"`
	// Harness and Profile, with Compile, compile a harness's own sandbox
	// (lnk agent harness run|check: caps.CompileHarness) instead of the
	// agent's; both empty for the agent's own.
	Harness string `json:"harness,omitempty"`
	Profile string `json:"profile,omitempty"`
	// Grants, set, makes a start of no agent (lnk sandbox run with flag
	// grants or --sandbox-file, when its run needs a broker): the kernel
	// compiles them itself, as for an agent's start, and starts the
	// run's brokers as its children. Agent, AgentID, Folders, Compile,
	// Harness and Profile are then empty.
	Grants *RunGrants `json:"grants,omitempty"`
	// Unconfined, with Compile, Harness and Profile "run", is lnk agent
	// harness run with the agent's sandbox off (its no-sandbox setting,
	// which the kernel reads itself): the command runs with no sandbox,
	// so no folder is granted, and the start's one broker is its proxy,
	// listening on a loopback port (RunProxyReply.Port), with no sealed
	// secret and no tool bridge. Its command's pidfd is attached as a
	// sandbox's is.
	Unconfined bool `json:"unconfined,omitempty"`
}

// RunGrants are the grants of a start of no agent, as the owner gave
// them: the flags (caps.Grants, as JSON, strictly decoded) or the path of
// a sandbox spec file, exactly one, and the folder relative paths start
// from ("": a relative path is refused).
type RunGrants struct {
	Flags json.RawMessage `json:"flags,omitempty"`
	File  string          `json:"file,omitempty"`
	Dir   string          `json:"dir"`
}

// Folder is one granted folder: an absolute path and its rights.
type Folder struct {
	Path  string `json:"path"`
	Read  bool   `json:"read"`
	Write bool   `json:"write"`
}

// StartReply names the new start and its capabilities.
type StartReply struct {
	Start uint64    `json:"start"`
	Caps  []CapInfo `json:"caps"`
}

// CapInfo describes one capability; Handle is its 128-bit handle in hex.
type CapInfo struct {
	Handle string `json:"handle"`
	Route  string `json:"route"`
	Rights string `json:"rights"`
}

// EndRequest revokes every capability of an agent's start.
type EndRequest struct {
	Agent string `json:"agent"`
	Start uint64 `json:"start"`
}

// EndReply says how many capabilities were revoked.
type EndReply struct {
	Revoked int `json:"revoked"`
	// Ended, if set, says the kernel had ended the start already, and
	// why (lnk kernel end AGENT): its sandbox was killed.
	Ended string `json:"ended,omitempty"`
}

// CapRequest names a capability as an agent uses it.
type CapRequest struct {
	Agent  string `json:"agent"`
	Handle string `json:"handle"`
}

// FileRequest uses a folder capability on a file beneath it: Path is
// relative to the capability's folder.
type FileRequest struct {
	Agent  string `json:"agent"`
	Handle string `json:"handle"`
	Path   string `json:"path"`
}

// CapRef names the capability a request uses: its agent and handle.
func (r *CapRequest) CapRef() (agent, handle string) { return r.Agent, r.Handle }

// CapRef names the capability a request uses: its agent and handle.
func (r *FileRequest) CapRef() (agent, handle string) { return r.Agent, r.Handle }

// The requests of a sandbox the kernel holds the capabilities of (lnk
// sandbox run --agent): lnk starts the agent (Start with Compile), takes
// each granted folder's handle from the kernel (OpenFolder), binds those
// fds into bubblewrap, hands the kernel bubblewrap's pidfd (Attach) and
// waits on Watch, which answers when the kernel ends the start; a stop of
// the agent (EndAgent) kills each of its sandboxes through that pidfd.
var (
	OpenFolder = wire.Spec{Type: 12, Name: "open-folder", ReplyFDs: 1, States: wire.In(StateServing)}
	Attach     = wire.Spec{Type: 13, Name: "attach", FDs: 1, States: wire.In(StateServing)}
	Watch      = wire.Spec{Type: 14, Name: "watch", States: wire.In(StateServing)}
	EndAgent   = wire.Spec{Type: 15, Name: "end-agent", States: wire.In(StateServing)}
)

// OpenFolderRequest asks for a duplicate of one folder capability's
// handle (O_PATH|O_DIRECTORY) of a start this connection made; the reply
// is its CapInfo, with the fd beside it.
type OpenFolderRequest struct {
	Start  uint64 `json:"start"`
	Handle string `json:"handle"`
}

// StartRef names one start this connection made (Attach, Watch).
type StartRef struct {
	Start uint64 `json:"start"`
}

// WatchReply says why the kernel ended a start: its sandbox is killed.
type WatchReply struct {
	Reason string `json:"reason"`
}

// EndAgentRequest ends every start of an agent, wherever it was made.
type EndAgentRequest struct {
	Agent string `json:"agent"`
}

// EndAgentReply counts what ending an agent did.
type EndAgentReply struct {
	Starts  int `json:"starts"`  // starts ended
	Revoked int `json:"revoked"` // capabilities revoked
	Killed  int `json:"killed"`  // sandboxes killed through their pidfd
}

// A start's brokers (kernel/start_brokers.go): for a start the kernel
// compiled (StartRequest.Compile), on the connection that made it, the
// kernel starts the agent's proxy (lnk-netbroker, with the key broker of
// its sealed secrets) and its ask broker (lnk-askbroker, with its dialog
// launcher) as its own children, and hands the caller only the channels
// its sandbox and tool bridge use. They end with the start; one that
// dies ends the start (it is never started again: what it was handed
// cannot be handed twice).
var (
	// RunProxy carries the write end of the run's lifeline (a pipe: the
	// kernel writes why and closes it when the start's brokers end), the
	// receiving end of the proxy's relay channel (the sandbox's first
	// stage hands its listener on it), and, with a tool bridge, the
	// proxy's end of the bridge's channel.
	RunProxy = wire.Spec{Type: 40, Name: "run-proxy", FDs: 2, MaxFDs: 3, States: wire.In(StateServing)}
	// RunAsk carries the owner's terminal when there is one; its reply,
	// the channel to the ask broker.
	RunAsk = wire.Spec{Type: 41, Name: "run-ask", MaxFDs: 1, ReplyFDs: 1, States: wire.In(StateServing)}
)

// RunProxyRequest asks for the proxy of an agent's start.
type RunProxyRequest struct {
	Agent    string `json:"agent"`
	Start    uint64 `json:"start"`
	Degraded bool   `json:"degraded,omitempty"`
	// ToolBridge says the request carries the bridge's channel (fd 3).
	ToolBridge bool `json:"tool_bridge,omitempty"`
}

// RunProxyReply is what the sandbox is told of its proxy. Without Proxy
// none was started: the grants reach nothing through one, or ([network]
// mode = "host") there is none to add Sealed, and the caller refuses.
type RunProxyReply struct {
	Proxy        bool              `json:"proxy"`
	Socket       string            `json:"socket"`
	Secret       string            `json:"secret"`
	Placeholders map[string]string `json:"placeholders"`
	Sealed       []string          `json:"sealed"`
	// Port is the loopback port of an unconfined start's proxy (Socket
	// is then empty); 0 for a sandbox's.
	Port uint16 `json:"port,omitempty"`
}

// RunAskRequest asks for the ask broker of an agent's start.
type RunAskRequest struct {
	Agent    string `json:"agent"`
	Start    uint64 `json:"start"`
	Degraded bool   `json:"degraded,omitempty"`
	Wait     string `json:"wait"`     // ask_wait, as Go writes a duration
	Terminal bool   `json:"terminal"` // the request carries the owner's terminal
	// Desktop is the caller's desktop session variables
	// (askbroker.DesktopVars; any other is refused): the dialog
	// launcher's whole environment.
	Desktop []string `json:"desktop"`
}

package caps

import "time"

// Compiled is an agent's grants, both layers joined and checked: the one
// value the sandbox builder, the network broker's proxy, the kernel and the
// tool bridge are handed. It is plain data. Every path in it is absolute,
// cleaned, and was resolved without following a link; every rule of
// rules.go held when it was made. A consumer grants exactly what it names
// and nothing else: an empty list means none, never "any".
//
// Fields are only ever added, never changed in meaning.
type Compiled struct {
	// AgentID is the agent's random 128-bit ID, 32 lowercase hex digits.
	// Empty for a sandbox compiled from a spec file or flags alone.
	AgentID string `json:"agent_id,omitempty"`
	// AgentName is the agent's name (letters, digits, '-', '_', '.').
	AgentName string `json:"agent_name,omitempty"`
	// Home is the owner's HOME the paths were made absolute against.
	Home string `json:"home"`
	// AgentDir is ~/Link/Agents/<name>, the agent's own folder (empty
	// without an agent).
	AgentDir string `json:"agent_dir,omitempty"`
	// FilesDir is the agent's files folder, ~/Link/Agents/<name>/Home
	// (empty without an agent).
	FilesDir string `json:"files_dir,omitempty"`
	// Harness, HarnessHome and Profile are set for a harness's own
	// sandbox (CompileHarness, harness.go): the harness whose layer is
	// joined, its home ~/Link/Agents/<name>/Harnesses/<harness>, written
	// and the sandbox's HOME, and the name its calls are logged under
	// beside the agent's, <harness>-run or <harness>-check. All empty
	// for the agent's own sandbox.
	Harness     string `json:"harness,omitempty"`
	HarnessHome string `json:"harness_home,omitempty"`
	Profile     string `json:"profile,omitempty"`

	// Folders are the folders granted, each with its rights. No two name
	// the same path; a read-only folder is never inside a written one.
	Folders []Folder `json:"folders"`
	// ReadOnly are paths inside written folders that stay read-only: .git,
	// .envrc, .vscode and .idea at the top of each written folder (whether
	// they exist yet or not).
	ReadOnly []string `json:"read_only"`
	// NestedReadOnly are the .git, .envrc, .vscode and .idea found below
	// the top of a written folder (lnk agent allow --write's scan, [files]
	// read_only) that still exist: each is bound read-only over itself,
	// from what the builder opens there only if it is still ID.
	NestedReadOnly []Folder `json:"nested_read_only"`
	// Pinned are the folders between each NestedReadOnly and its written
	// folder, each bound over itself (written as before) so that it is a
	// mount of its own, which the sandbox can't move aside and replace
	// with one holding a .git of its making. Parents come before children.
	Pinned []Folder `json:"pinned"`
	// Hidden are paths that must stay unreachable even under a granted
	// folder (--read '~'): ~/.lnk, ~/Link/Agents, ~/Link/History,
	// ~/Link/Teams, and the session's runtime folders (/run/user/<uid>,
	// $XDG_RUNTIME_DIR), which may not exist. A Folder inside a Hidden path (only ever the agent's
	// own Home, or a folder of it) is mounted again over the hiding.
	//
	// Every path here was checked at compile time; the builder must still
	// open each one without following a link when it mounts it, since the
	// tree may change between the two.
	Hidden []string `json:"hidden"`

	// Commands are the programs the sandbox may start ([commands]): a bare
	// name (looked up on PATH), an absolute path, or "*" for any.
	Commands []string `json:"commands"`

	// Internet is the [internet] grant: through the filtering proxy.
	Internet Internet `json:"internet"`
	// LocalhostPorts are the loopback ports granted ([localhost] ports).
	// AllLocalhost is "*": only ever with NetworkMode "host".
	LocalhostPorts []uint16 `json:"localhost_ports"`
	// LocalModelPorts are Link Harness's local model's ports, each also in
	// LocalhostPorts: its proxy passes them inference only
	// (CompileLinkHarness).
	LocalModelPorts []uint16 `json:"local_model_ports,omitempty"`
	AllLocalhost    bool     `json:"all_localhost"`
	// LANHosts are the local-network hosts granted ([lan] hosts).
	LANHosts []string `json:"lan_hosts"`
	// NetworkMode is [network] mode: "" (behind Link's proxy, the default)
	// or "host" (the network as it is, no proxy).
	NetworkMode string `json:"network_mode"`
	// BrowserHosts are the hosts whose https:// pages may be opened in the
	// owner's browser after asking ([browser] hosts).
	BrowserHosts []string `json:"browser_hosts"`

	// Tools are the outside tools granted ([tools]), by name.
	Tools map[string]Tool `json:"tools"`
	// Strangers are the tools a stranger's message gets ([tools]
	// strangers; none by default; never the scheduler or run).
	Strangers []string `json:"strangers"`
	// Teams are the team folders granted ([teams.<team>]), by team name.
	Teams map[string]TeamGrant `json:"teams"`
	// Models are the models the agent may use ([model] allow); empty means
	// the harness's own.
	Models []string `json:"models"`

	// Limits are the tool limits, the spec's defaults where unset.
	Limits Limits `json:"limits"`
}

// Access is a folder's rights.
type Access struct {
	Read  bool `json:"read"`
	Write bool `json:"write"`
	// Exec is never set by caps on a granted folder: what may start is
	// [commands] (Commands), which the sandbox builder resolves itself.
	Exec bool `json:"exec"`
}

// Folder is one granted folder: an absolute, cleaned path and its rights.
type Folder struct {
	Path   string `json:"path"`
	Access Access `json:"access"`
	// ID is the folder caps checked, as it found it: the sandbox binds
	// Path only if what it opens there is still that folder, so a folder
	// moved into its place after the check is refused, a link or not.
	// Zero for a Folder made other than by Compile, or read back from
	// JSON (it is never written there): nothing to compare.
	ID FileID `json:"-"`
}

// FileID is a file's identity: its device and inode.
type FileID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// Internet is the [internet] grant.
type Internet struct {
	// On is whether the internet is reached at all (through the proxy).
	On bool `json:"on"`
	// Hosts are the hosts allowed; empty with On means any host.
	Hosts []string `json:"hosts"`
	// PerMinute caps requests a minute (0: no cap).
	PerMinute int `json:"per_minute"`
	// TCP are plain TCP endpoints ("host:port") the agent may reach.
	TCP []string `json:"tcp"`
}

// Tool is one outside tool's grant ([tools]): which calls go through
// without asking.
type Tool struct {
	// Allow are the call names (tools/call name, resources/read,
	// prompts/get) that go through without asking.
	Allow []string `json:"allow"`
	// AskNone is "ask none": every call goes through without asking.
	AskNone bool `json:"ask_none"`
}

// TeamGrant is a team's folders granted to the agent ([teams.<team>]):
// relative names one level inside the team's folder, or "." for all.
type TeamGrant struct {
	Read  []string `json:"read"`
	Write []string `json:"write"`
}

// Limits are the tool limits: [tool.run], [tool.memory], [tool.scheduler]
// and [run].
type Limits struct {
	Run       RunLimits       `json:"run"`
	Memory    MemoryLimits    `json:"memory"`
	Scheduler SchedulerLimits `json:"scheduler"`
	// IdleAfter is [run] idle_after: an idle agent stops after it.
	IdleAfter time.Duration `json:"idle_after"`
}

// RunLimits are [tool.run]'s.
type RunLimits struct {
	Timeout           time.Duration `json:"timeout"`
	Output            int64         `json:"output"`
	BackgroundTimeout time.Duration `json:"background_timeout"`
	Background        int           `json:"background"`
	BackgroundOutput  int64         `json:"background_output"`
	BackgroundPerDay  int           `json:"background_per_day"`
	BackgroundKeep    time.Duration `json:"background_keep"`
}

// MemoryLimits are [tool.memory]'s.
type MemoryLimits struct {
	// Notes is the most bytes memory/notes.md may hold.
	Notes int64 `json:"notes"`
}

// SchedulerLimits are [tool.scheduler]'s.
type SchedulerLimits struct {
	Hops      int `json:"hops"`
	PerDay    int `json:"per_day"`
	Subagents int `json:"subagents"`
}

// DefaultLimits are the spec's defaults, and Link's choices where the spec
// names none.
var DefaultLimits = Limits{
	Run: RunLimits{
		Timeout:           2 * time.Minute,
		Output:            64 << 10,
		BackgroundTimeout: time.Hour,
		Background:        4,
		BackgroundOutput:  1 << 20,
		BackgroundPerDay:  100,
		BackgroundKeep:    24 * time.Hour,
	},
	Memory:    MemoryLimits{Notes: 4 << 10},
	Scheduler: SchedulerLimits{Hops: 8, PerDay: 100, Subagents: 4},
	IdleAfter: 5 * time.Minute,
}

package move

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/secrets"
)

// The placing journal, ~/.lnk/moving/<agent id>.placing (journal_file.go
// keeps it): what a receive's or a restore's placing did, written ahead
// of each step, so that a placing killed half way (SIGKILL, a power cut)
// is undone by the next lnk agent receive, restore or start of the agent.
//
// It is lines of JSON. The first, its head, says whose placing it is and
// where its staging folder is; it is written whole (ownerfile.WriteAtomic)
// before the first step. Each step is then appended, with what undoes it,
// and made durable (fsync) before the step is taken: a step the journal
// does not name was never taken. An undo appends {"undone":n} once step n
// is undone, last step first. Only the last line may be cut short (a
// crash while it was appended, its step never taken): it is dropped. Any
// other line Link cannot read refuses the whole journal.

// journalFormat names the journal's form: another is refused.
const journalFormat = "lnk-placing/v1"

// Limits of a journal Link reads back.
const (
	maxJournal     = 256 << 20 // bytes
	maxJournalLine = 128 << 10 // a moved note at most, escaped, and the rest
	maxJournalRel  = 4096      // a folder's path below ~/Link/Agents
	maxMovedNote   = 64 << 10  // caps's own limit on a moved note
)

// ErrJournal refuses a placing journal Link cannot read back.
var ErrJournal = errors.New("move: the placing journal (~/.lnk/moving/<agent id>.placing) is not one Link wrote")

// journalHead is the journal's first line.
type journalHead struct {
	Format string `json:"format"`
	Kind   string `json:"kind"` // "receive" or "restore"
	ID     string `json:"id"`
	Name   string `json:"name"`
	// Staging is the staging folder below ~/Link/Agents: .moving/<id>
	// (a receive) or .restoring-<32 hex> (a restore).
	Staging string `json:"staging"`
	// New: the agent was not here before (a receive), so an undo removes
	// it; SettingsNew: nor was its folder in ~/.lnk/agents.
	New         bool `json:"new,omitempty"`
	SettingsNew bool `json:"settings_new,omitempty"`
}

// fileID is a file's device and inode: what a step moved, or a folder.
type fileID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// The ops of a step.
const (
	opRename  = "rename"  // Src/SName to Dst/DName (exchanged with Was when Exchange)
	opMkdir   = "mkdir"   // DName made in Dst
	opSecrets = "secrets" // Added secrets, and Granted to the agent
	opConf    = "conf"    // the agent's rclone.conf written (an agent new here)
	opNote    = "note"    // the moved note ended; Note is what it said
)

// journalLine is a step, or an undo's progress (Undone).
type journalLine struct {
	Step     *int     `json:"step,omitempty"`
	Undone   *int     `json:"undone,omitempty"`
	Op       string   `json:"op,omitempty"`
	Src      jname    `json:"src,omitempty"` // folders, below ~/Link/Agents
	SrcDir   *fileID  `json:"src_dir,omitempty"`
	SName    jname    `json:"sname,omitempty"`
	Dst      jname    `json:"dst,omitempty"`
	DstDir   *fileID  `json:"dst_dir,omitempty"`
	DName    jname    `json:"dname,omitempty"`
	Exchange bool     `json:"exchange,omitempty"`
	Moved    *fileID  `json:"moved,omitempty"` // what SName was
	Was      *fileID  `json:"was,omitempty"`   // what DName was (an exchange)
	Added    []string `json:"added,omitempty"`
	Granted  []string `json:"granted,omitempty"`
	Note     string   `json:"note,omitempty"`
}

// jname is a name or folder in the journal: a JSON string when it is
// UTF-8, else {"bytes":"<base64>"}, so a file's name of any bytes is
// journaled as it is (a JSON string would replace what is not UTF-8).
// Each name has one form: bytes that are UTF-8 are refused.
type jname string

func (n jname) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(n)) {
		return json.Marshal(string(n))
	}
	return json.Marshal(nameBytes{Bytes: []byte(n)})
}

func (n *jname) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*n = jname(s)
		return nil
	}
	var v nameBytes
	if err := decodeStrict(b, &v); err != nil {
		return err
	}
	if v.Bytes == nil || utf8.Valid(v.Bytes) {
		return errors.New("a name as bytes that are none, or UTF-8")
	}
	*n = jname(v.Bytes)
	return nil
}

type nameBytes struct {
	Bytes []byte `json:"bytes"`
}

// journalRecord is a journal read back.
type journalRecord struct {
	Head  journalHead
	Steps []journalLine // each step, in order
	// Undone is how many steps, from the last, an undo has undone.
	Undone int
}

var restoringName = regexp.MustCompile(`^\.restoring-[0-9a-f]{32}$`)

// parseJournal reads a journal back, strictly: every line whole and in
// its order, every name one Link would write, every folder below the
// agent's own folder or its staging folder. Anything else is ErrJournal.
func parseJournal(b []byte) (*journalRecord, error) {
	if len(b) > maxJournal {
		return nil, fmt.Errorf("%w: over %d bytes", ErrJournal, maxJournal)
	}
	lines := bytes.Split(b, []byte("\n"))
	// The last line is cut short or empty: its step was never taken.
	lines = lines[:len(lines)-1]
	if len(lines) == 0 {
		return nil, fmt.Errorf("%w: it has no head", ErrJournal)
	}
	rec := &journalRecord{}
	if !utf8.Valid(lines[0]) {
		return nil, fmt.Errorf("%w: its head is not UTF-8", ErrJournal)
	}
	if err := decodeStrict(lines[0], &rec.Head); err != nil {
		return nil, fmt.Errorf("%w: its head: %v", ErrJournal, err)
	}
	if err := rec.Head.check(); err != nil {
		return nil, fmt.Errorf("%w: its head: %v", ErrJournal, err)
	}
	for i, l := range lines[1:] {
		if !utf8.Valid(l) {
			return nil, fmt.Errorf("%w: line %d is not UTF-8", ErrJournal, i+2)
		}
		var jl journalLine
		if err := decodeStrict(l, &jl); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrJournal, i+2, err)
		}
		if err := rec.add(&jl); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrJournal, i+2, err)
		}
	}
	return rec, nil
}

// decodeStrict decodes one line of JSON, no field unknown, nothing after.
func decodeStrict(line []byte, v any) error {
	if len(line) > maxJournalLine {
		return fmt.Errorf("a line over %d bytes", maxJournalLine)
	}
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return errors.New(oneLine(err))
	}
	if d.More() {
		return errors.New("more after its record")
	}
	return nil
}

func (h *journalHead) check() error {
	if h.Format != journalFormat {
		return fmt.Errorf("format %q, not %s", h.Format, journalFormat)
	}
	if err := secrets.CheckAgentID(h.ID); err != nil {
		return errors.New("not an agent's ID")
	}
	if err := caps.CheckName(h.Name); err != nil {
		return errors.New("not an agent's name")
	}
	switch h.Kind {
	case "receive":
		if h.Staging != ".moving/"+h.ID {
			return errors.New("a receive's staging folder is .moving/<its id>")
		}
	case "restore":
		if !restoringName.MatchString(h.Staging) || h.New || h.SettingsNew {
			return errors.New("a restore's staging folder is .restoring-<32 hex>, of an agent here")
		}
	default:
		return fmt.Errorf("kind %q", h.Kind)
	}
	if h.SettingsNew && !h.New {
		return errors.New("settings new for an agent that is not")
	}
	return nil
}

// add takes the next line: a step, while no undo began, or the next step
// undone, last first.
func (r *journalRecord) add(l *journalLine) error {
	if (l.Step == nil) == (l.Undone == nil) {
		return errors.New("neither a step nor an undo, or both")
	}
	if l.Undone != nil {
		if *l.Undone != len(r.Steps)-1-r.Undone || *l.Undone < 0 {
			return fmt.Errorf("undone %d out of its order", *l.Undone)
		}
		if l.Op != "" || l.Src != "" || l.Dst != "" || l.SName != "" || l.DName != "" || l.SrcDir != nil || l.DstDir != nil ||
			l.Moved != nil || l.Was != nil || l.Exchange || l.Added != nil || l.Granted != nil || l.Note != "" {
			return errors.New("an undo's line names more than its step")
		}
		r.Undone++
		return nil
	}
	if r.Undone > 0 {
		return errors.New("a step after its undo began")
	}
	if *l.Step != len(r.Steps) {
		return fmt.Errorf("step %d out of its order", *l.Step)
	}
	if err := r.Head.checkStep(l); err != nil {
		return fmt.Errorf("step %d: %v", *l.Step, err)
	}
	r.Steps = append(r.Steps, *l)
	return nil
}

// checkStep checks a step's fields for its op: each needed one there,
// none other.
func (h *journalHead) checkStep(l *journalLine) error {
	rename := l.Op == opRename
	mkdir := l.Op == opMkdir
	switch {
	case rename || mkdir:
	case l.Op == opSecrets || l.Op == opConf || l.Op == opNote:
		if l.Src != "" || l.Dst != "" || l.SName != "" || l.DName != "" || l.SrcDir != nil || l.DstDir != nil || l.Moved != nil || l.Was != nil || l.Exchange {
			return fmt.Errorf("%s names a folder", l.Op)
		}
	default:
		return fmt.Errorf("op %q", l.Op)
	}
	if h.Kind == "restore" && !rename && !mkdir {
		return fmt.Errorf("%s in a restore", l.Op)
	}
	if l.Op != opSecrets && (l.Added != nil || l.Granted != nil) {
		return fmt.Errorf("secrets in %s", l.Op)
	}
	if l.Op != opNote && l.Note != "" {
		return fmt.Errorf("a note in %s", l.Op)
	}
	switch l.Op {
	case opRename:
		if err := h.checkRel(l.Src); err != nil {
			return fmt.Errorf("src: %v", err)
		}
		if err := h.checkRel(l.Dst); err != nil {
			return fmt.Errorf("dst: %v", err)
		}
		if err := checkOneName(string(l.SName)); err != nil {
			return fmt.Errorf("sname: %v", err)
		}
		if err := checkOneName(string(l.DName)); err != nil {
			return fmt.Errorf("dname: %v", err)
		}
		if l.SrcDir == nil || l.DstDir == nil || l.Moved == nil {
			return errors.New("a rename names both folders and what it moved")
		}
		if l.Exchange != (l.Was != nil) {
			return errors.New("an exchange names what it exchanged with, and only it")
		}
	case opMkdir:
		if err := h.checkRel(l.Dst); err != nil {
			return fmt.Errorf("dst: %v", err)
		}
		if err := checkOneName(string(l.DName)); err != nil {
			return fmt.Errorf("dname: %v", err)
		}
		if l.DstDir == nil || l.Src != "" || l.SName != "" || l.SrcDir != nil || l.Moved != nil || l.Was != nil || l.Exchange {
			return errors.New("a folder made names its folder, and only it")
		}
	case opSecrets:
		for _, n := range append(append([]string{}, l.Added...), l.Granted...) {
			if err := secrets.CheckName(n); err != nil {
				return fmt.Errorf("secret %q: %v", n, err)
			}
		}
	case opConf:
		// Written only for an agent new here, removed whole by an undo.
		if !h.New {
			return errors.New("an rclone.conf written for an agent that was here")
		}
	case opNote:
		if len(l.Note) > maxMovedNote || caps.CheckMovedNote([]byte(l.Note), h.ID) != nil {
			return errors.New("a moved note not this agent's")
		}
	}
	return nil
}

// checkRel refuses a folder not below the agent's own folder or its
// staging folder, or with a name Link would not write ('.', '..', empty).
func (h *journalHead) checkRel(n jname) error {
	rel := string(n)
	if len(rel) > maxJournalRel {
		return errors.New("too long")
	}
	if rel != h.Name && !strings.HasPrefix(rel, h.Name+"/") && rel != h.Staging && !strings.HasPrefix(rel, h.Staging+"/") {
		return fmt.Errorf("%q is not below agent %s's folder or its staging folder", rel, h.Name)
	}
	for _, p := range strings.Split(rel, "/") {
		if err := checkOneName(p); err != nil {
			return err
		}
	}
	return nil
}

func checkOneName(n string) error {
	if n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/\x00") {
		return fmt.Errorf("%q is not one name", n)
	}
	return nil
}

package apply

import (
	"errors"
	"fmt"
	"strings"

	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/resolve"
)

// The limits file-tool.txt sets.
const (
	MaxFile   = 4 << 20  // a file read or written
	MaxDiff   = 16 << 10 // a diff answered; past it, diff_cut and sha256
	maxFind   = 1 << 20  // a file find reads for text
	maxList   = 10_000   // entries a list answers; past them, the first by name, cut
	maxListed = 4 << 20  // bytes of the entries a list or find answers, JSON-encoded; past them, cut
	maxWalk   = 100_000  // entries a find walks
	maxPage   = 64 << 10 // bytes a read answers
	pageLines = 2000     // lines a read answers by default
)

// MaxAnswer is the longest answer line written, its newline included:
// serve's cap, past which it ends the process as misbehaving.
const MaxAnswer = 8 << 20

// The refusals this package adds to the resolver's.
var (
	ErrTooLarge    = errors.New("over 4 MiB")
	ErrNotText     = errors.New("not text")
	ErrNotWritable = errors.New("not in a folder --write names")
	ErrNeverWrite  = errors.New("never written by the file tool")
	ErrReadOnly    = errors.New("read-only in a written folder")
	ErrUsage       = errors.New("bad arguments")
)

// Refusal is a call refused, saying which call, which name and why
// (Link's one refusal shape, internal/refusal): its Reason names the
// call and the name, its Err is why without the name.
type Refusal = refusal.Refusal

// refused is op's refusal of path ("" when the call names none) for why.
func refused(op, path string, why error) *Refusal {
	if path == "" {
		return &Refusal{Reason: op + ": " + why.Error(), Err: why}
	}
	return &Refusal{Reason: fmt.Sprintf("%s %q: %v", op, path, why), Err: why}
}

// checkName refuses a name that is not clean and relative, before the
// resolver sees it: absolute or with "..", empty components, "." parts.
func checkName(op, name string) error {
	if err := resolve.ValidatePath(name); err != nil {
		var re *resolve.Error
		if errors.As(err, &re) {
			why := "not a clean relative name"
			if re.Kind == resolve.ErrEscape {
				why = "outside the files folder (absolute, or with ..)"
			}
			return refused(op, name, &worded{why, re.Kind})
		}
		return refused(op, name, err)
	}
	return nil
}

// neverWritten are the collections no call writes: the conversations
// and memory's index, which Link's own services write.
var neverWritten = []string{"chats", "memory"}

// ownersTops are the agent folder's collections its owner writes: --write
// . names the files folder, never these; only a --write naming one
// writes it.
var ownersTops = []string{"instructions", "skills"}

// readOnlyTops stay read-only at the top of every written folder, as the
// sandbox binds them.
var readOnlyTops = []string{".git", ".envrc", ".vscode", ".idea"}

// checkWriteFolders refuses a --write that names no clean relative
// folder, or names chats/ or memory/.
func checkWriteFolders(write []string) error {
	for _, w := range write {
		if err := resolve.ValidatePath(w); err != nil {
			return fmt.Errorf("--write %q: not a clean relative folder of the files folder", w)
		}
		if under(w, neverWritten) {
			return fmt.Errorf("--write %q: %w (chats/ and memory/ are Link's to write)", w, ErrNeverWrite)
		}
	}
	return nil
}

// checkWrite says whether name may be written under the --write folders:
// beneath one of them, or anywhere with ".", but never in chats/ or
// memory/, never the folder itself, never a written folder's .git, .envrc,
// .vscode or .idea; and where instructions/ and skills/ name the agent
// folder, not with "." alone.
func (s *Session) checkWrite(op, name string) error {
	if err := checkName(op, name); err != nil {
		return err
	}
	if name == "." {
		return refused(op, name, fmt.Errorf("the folder itself: %w", ErrNotWritable))
	}
	if under(name, neverWritten) {
		return refused(op, name, fmt.Errorf("%w (chats/ and memory/ are Link's to write)", ErrNeverWrite))
	}
	owners := s.agentFolder && under(name, ownersTops)
	for _, w := range s.write {
		rest, ok := inside(name, w)
		if !ok || (w == "." && owners) {
			continue
		}
		if under(rest, readOnlyTops) {
			return refused(op, name, fmt.Errorf("%w (.git, .envrc, .vscode and .idea stay the owner's)", ErrReadOnly))
		}
		return nil
	}
	folders := strings.Join(s.write, ", ")
	if folders == "" {
		folders = "none"
	}
	if owners {
		return refused(op, name, fmt.Errorf("%w (%s): instructions/ and skills/ are the agent folder's, its owner's to write", ErrNotWritable, folders))
	}
	return refused(op, name, fmt.Errorf("%w (%s)", ErrNotWritable, folders))
}

// inside reports whether name lies beneath folder w, and its rest.
func inside(name, w string) (string, bool) {
	if w == "." {
		return name, true
	}
	if rest, ok := strings.CutPrefix(name, w+"/"); ok {
		return rest, true
	}
	return "", false
}

// under reports whether name's first component is one of tops.
func under(name string, tops []string) bool {
	first, _, _ := strings.Cut(name, "/")
	for _, t := range tops {
		if first == t {
			return true
		}
	}
	return false
}

// Reason is a refusal's reason without the name it concerns, for a log
// that must not hold the agent's paths.
func Reason(err error) string {
	if r, ok := refusal.Of(err); ok && r.Err != nil {
		return r.Err.Error()
	}
	return err.Error()
}

// worded is a resolver refusal said in the file tool's words.
type worded struct {
	msg  string
	kind error
}

func (w *worded) Error() string { return w.msg }
func (w *worded) Unwrap() error { return w.kind }

package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/jsonscan"
	"lnk.dev/lnk/internal/ownerfile"
)

// MaxMessageFile is the largest file of an older harness's chat, one
// message each (the spec's 16 MiB).
const MaxMessageFile = 16 << 20

// oldFile is one message of an older harness's chat: <seq>.json.
type oldFile struct {
	seq  int64
	name string
}

// oldNumber returns the number a file of an older harness's chat is
// named by, and false for any other name.
func oldNumber(name string) (int64, bool) {
	digits, ok := strings.CutSuffix(name, ".json")
	if !ok || digits == "" || len(digits) > 18 {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// names lists the folder dirfd, through its handle.
func names(dirfd int) ([]string, error) {
	fd, err := ownerfile.OpenDir(dirfd, ".", unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	d := os.NewFile(uintptr(fd), ".")
	defer d.Close()
	ns, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("listing the conversation's folder: %w", err)
	}
	return ns, nil
}

// oldFiles lists an older harness's files in the folder dirfd, by
// number; two names for one number ("7.json", "07.json") are refused.
func oldFiles(dirfd int) ([]oldFile, error) {
	names, err := names(dirfd)
	if err != nil {
		return nil, err
	}
	var out []oldFile
	for _, n := range names {
		if seq, ok := oldNumber(n); ok {
			out = append(out, oldFile{seq, n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	for i := 1; i < len(out); i++ {
		if out[i].seq == out[i-1].seq {
			return nil, fmt.Errorf("%s and %s are both message %d", out[i-1].name, out[i].name, out[i].seq)
		}
	}
	return out, nil
}

// readOld reads an older harness's chat in the folder dirfd, each file
// as the log is read, and returns its last number.
func readOld(dirfd int, add func(Event)) (int64, error) {
	files, err := oldFiles(dirfd)
	if err != nil {
		return 0, err
	}
	var last int64
	for _, f := range files {
		data, err := ownerfile.ReadFile(dirfd, f.name, ownerfile.Rule{Type: unix.S_IFREG, Forbid: 0o077, OneLink: true}, MaxMessageFile)
		if err != nil {
			return 0, fmt.Errorf("an older harness's message: %w", err)
		}
		e, err := decodeOld(f.seq, data)
		if err != nil {
			return 0, fmt.Errorf("an older harness's message %s: %w", f.name, err)
		}
		last = e.Seq
		add(e)
	}
	return last, nil
}

// decodeOld decodes one file of an older harness's chat, numbered seq:
// one event as a log line holds it (spaces and a newline around it
// allowed), whose "seq", when it has one, is the file's number.
func decodeOld(seq int64, data []byte) (Event, error) {
	data = bytes.TrimSpace(data)
	if bytes.IndexByte(data, '\n') >= 0 {
		// A file may be indented: decode it as one line would be.
		var c bytes.Buffer
		if err := json.Compact(&c, data); err != nil {
			return Event{}, fmt.Errorf("not one JSON object: %w", err)
		}
		data = c.Bytes()
	}
	hasSeq := false
	if err := jsonscan.Members(data, func(k string, _ jsonscan.Span) { hasSeq = hasSeq || k == "seq" }); err != nil {
		return Event{}, fmt.Errorf("not one JSON object")
	}
	if !hasSeq {
		data = withSeq(data, seq)
	}
	e, err := decodeEvent(data)
	if err != nil {
		return e, err
	}
	if e.Seq != seq {
		return e, fmt.Errorf("it says it is message %d", e.Seq)
	}
	return e, nil
}

// withSeq puts "seq" first into a JSON object's text; anything else is
// left for decodeEvent to refuse.
func withSeq(obj []byte, seq int64) []byte {
	if len(obj) < 2 || obj[0] != '{' {
		return obj
	}
	head := `{"seq":` + strconv.FormatInt(seq, 10)
	rest := bytes.TrimSpace(obj[1:])
	if len(rest) > 0 && rest[0] != '}' {
		head += ","
	}
	return append([]byte(head), rest...)
}

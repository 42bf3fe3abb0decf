package apply

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

func TestDecodeCallIsStrict(t *testing.T) {
	good := []string{
		`{"name":"read","arguments":{"path":"a"}}`,
		`{"name":"list"}`,
		` {"arguments":{},"name":"find"} `,
	}
	for _, l := range good {
		if _, err := DecodeCall([]byte(l)); err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
	bad := []string{
		``, `null`, `[]`, `{}`, `{"name":""}`, `{"name":1}`,
		`{"name":"read","extra":1}`,
		`{"name":"read","arguments":[1]}`,
		`{"name":"read","arguments":"x"}`,
		`{"name":"read"}{"name":"list"}`,
		`{"name":"read"`,
	}
	for _, l := range bad {
		if _, err := DecodeCall([]byte(l)); err == nil {
			t.Errorf("%q was taken", l)
		}
	}
}

// TestServeAnswersEachLine: every line gets one answer line, in order, a
// bad line included, and a line past MaxLine is answered and dropped.
func TestServeAnswersEachLine(t *testing.T) {
	w := newWorld(t, "work")
	w.put(t, "a.txt", "hi\n")
	maxLine = 1 << 20
	t.Cleanup(func() { maxLine = MaxLine })
	in := strings.Join([]string{
		`{"name":"read","arguments":{"path":"a.txt"}}`,
		`not json`,
		`{"name":"list"}`,
		`{"name":"write","arguments":{"path":"work/x","content":"` + strings.Repeat("a", 1<<20) + `"}}`,
		`{"name":"read","arguments":{"path":"a.txt","line":1}}`,
	}, "\n") // the last line without its newline
	var out bytes.Buffer
	if err := Serve(strings.NewReader(in), &out, w.s); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var a map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil || len(a) == 0 {
			t.Fatalf("answer %q", sc.Text())
		}
		for k := range a {
			kinds = append(kinds, k)
		}
	}
	// Not JSON is refused; a line past its cap is answered an error.
	if strings.Join(kinds, ",") != "ok,error,refused,ok,error,ok" && strings.Join(kinds, ",") != "ok,refused,error,ok,error,ok" {
		t.Fatalf("answers: %v", kinds)
	}
}

// TestApplyAlone runs the built lnk-file-tool apply: calls on its stdin,
// answers on its stdout, refusals logged on stderr without the path; and
// one that cannot start says why.
func TestApplyAlone(t *testing.T) {
	w := newWorld(t, "work")
	w.put(t, "a.txt", "hello\n")
	bin := testenv.Bin(t, "lnk-file-tool")
	cmd := exec.Command(bin, "apply", "--files", w.files, "--agent-folder", w.agent, "--write", "work")
	cmd.Stdin = strings.NewReader(`{"name":"read","arguments":{"path":"a.txt"}}
{"name":"write","arguments":{"path":"work/b.txt","content":"x\n"}}
{"name":"write","arguments":{"path":"secret-name.txt","content":"x\n"}}
`)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("apply: %v\n%s", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"text":"hello\n"`) || !strings.Contains(lines[1], `"created":true`) ||
		!strings.Contains(lines[2], `"error":"write \"secret-name.txt\": not in a folder --write names (work)"`) {
		t.Fatalf("answers:\n%s", out.String())
	}
	if w.get(t, "work/b.txt") != "x\n" {
		t.Fatal("the write did not land")
	}
	log := errb.String()
	if strings.Count(log, "\n") != 1 || !strings.Contains(log, "refused write: not in a folder --write names") || strings.Contains(log, "secret-name") {
		t.Fatalf("the refusal log: %q", log)
	}

	cmd = exec.Command(bin, "apply", "--files", w.files, "--write", "chats")
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "chats/ and memory/ are Link's to write") {
		t.Fatalf("--write chats: %v %s", err, b)
	}
}

// TestApplyLinksNoExecNoNet: the sandboxed side cannot start a program or
// reach a network, because it links neither.
func TestApplyLinksNoExecNoNet(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "lnk.dev/lnk/services/filetool/apply")
	cmd.Dir = testenv.RepoRoot(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch dep {
		case "os/exec", "net", "net/http", "crypto/tls":
			t.Errorf("apply links %s", dep)
		}
	}
}

// TestReadLineEachKind: readLine over a 16-byte buffer returns a line
// that fits it, one longer than the buffer but within the cap, refuses
// one past the cap (within the buffer and beyond it) and reads on after
// it, and takes a last line without its newline.
func TestReadLineEachKind(t *testing.T) {
	maxLine = 40
	t.Cleanup(func() { maxLine = MaxLine })
	long := strings.Repeat("b", 40)
	in := "short\n" + long + "\n" + strings.Repeat("c", 41) + "\n" + strings.Repeat("d", 100) + "\nlast"
	br := bufio.NewReaderSize(strings.NewReader(in), 16)
	want := []string{"short", long, "error", "error", "last"}
	for i, w := range want {
		line, err := readLine(br)
		got := string(line)
		if err == errLineTooLong {
			got = "error"
		} else if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if got != w {
			t.Fatalf("line %d: %q, want %q", i, got, w)
		}
	}
	if _, err := readLine(br); err != io.EOF {
		t.Fatalf("after the last line: %v", err)
	}
}

// TestAnswerMarksRefusals: a name outside the files folder, a link and a
// write outside --write are answered refused (the bridge logs them so); a
// file that isn't there is an error but no refusal, and a read of a file
// that is (the positive control) is answered ok.
func TestAnswerMarksRefusals(t *testing.T) {
	w := newWorld(t, "work")
	w.put(t, "work/a.txt", "hi\n")
	w.put(t, "notes.txt", "n\n")
	if err := os.Symlink(filepath.Join(w.files, "notes.txt"), filepath.Join(w.files, "work", "ln")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		line    string
		refused bool
		ok      bool
	}{
		{`{"name":"read","arguments":{"path":"work/a.txt"}}`, false, true},
		{`{"name":"read","arguments":{"path":"../etc/passwd"}}`, true, false},
		{`{"name":"read","arguments":{"path":"work/ln"}}`, true, false},
		{`{"name":"write","arguments":{"path":"notes2.txt","content":"x"}}`, true, false},
		{`{"name":"read","arguments":{"path":"work/absent.txt"}}`, false, false},
	} {
		a := answer(w.s, []byte(c.line))
		if (a.OK != nil) != c.ok || a.Refused != c.refused || (!c.ok && a.Error == "") {
			t.Errorf("%s: %+v, want ok %v refused %v", c.line, a, c.ok, c.refused)
		}
	}
}

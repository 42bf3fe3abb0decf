package extract

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// The extractor's pipe carries one request at a time: the kind's byte
// ('d' docx, 'p' pdf), the document's length (4 bytes, big-endian), the
// document; its answer: 'o' (the text) or 'e' (the error's words), the
// length (4 bytes), the bytes.
const maxAnswer = MaxText + 4096

var kindByte = map[string]byte{"docx": 'd', "pdf": 'p'}

// Extractor is the process that starts each document's child for the
// memory service, which may not exec: started by StartExtractor before
// the service loads its filter, it runs "exe extract serve".
type Extractor struct {
	mu   sync.Mutex
	cmd  *exec.Cmd
	req  *os.File // the extractor's stdin
	ans  *os.File // its stdout
	dead error
}

// StartExtractor starts exe extract serve with no environment, killed
// with its parent.
func StartExtractor(exe string) (*Extractor, error) {
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ansR, ansW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return nil, err
	}
	cmd := &exec.Cmd{Path: exe, Args: []string{exe, "extract", "serve"}, Env: []string{}, Dir: "/",
		Stdin: reqR, Stdout: ansW, Stderr: os.Stderr, // its own failures, as the service's
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}}
	err = cmd.Start()
	reqR.Close()
	ansW.Close()
	if err != nil {
		reqW.Close()
		ansR.Close()
		return nil, fmt.Errorf("starting the document extractor: %w", err)
	}
	return &Extractor{cmd: cmd, req: reqW, ans: ansR}, nil
}

// Extract is doc's text, taken by a child of the extractor. An error of
// the document's own is that document's alone; one of the extractor
// (it ended, or did not answer within Wall and a margin) ends it, and
// every later document fails with it.
func (e *Extractor) Extract(kind string, doc []byte) (string, error) {
	k, ok := kindByte[kind]
	if !ok {
		return "", fmt.Errorf("%q is no kind of document extracted here (docx, pdf)", kind)
	}
	if len(doc) > MaxDocument {
		return "", fmt.Errorf("%d bytes, more than the %d a document may have", len(doc), MaxDocument)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead != nil {
		return "", e.dead
	}
	deadline := time.Now().Add(Wall + 10*time.Second)
	e.req.SetDeadline(deadline)
	e.ans.SetDeadline(deadline)
	var head [5]byte
	head[0] = k
	binary.BigEndian.PutUint32(head[1:], uint32(len(doc)))
	if _, err := e.req.Write(append(head[:], doc...)); err != nil {
		return "", e.fail(err)
	}
	if _, err := io.ReadFull(e.ans, head[:]); err != nil {
		return "", e.fail(err)
	}
	n := binary.BigEndian.Uint32(head[1:])
	if n > maxAnswer || head[0] != 'o' && head[0] != 'e' {
		return "", e.fail(fmt.Errorf("an answer it cannot have made (%q, %d bytes)", head[0], n))
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(e.ans, body); err != nil {
		return "", e.fail(err)
	}
	if head[0] == 'e' {
		return "", errors.New(string(body))
	}
	if len(body) > MaxText {
		return "", ErrTooMuchText
	}
	return string(body), nil
}

// fail ends the extractor after err. Called with mu held.
func (e *Extractor) fail(err error) error {
	e.dead = fmt.Errorf("the document extractor failed, and no document is read until the memory service starts again: %w", err)
	e.Close()
	return e.dead
}

// Close ends the extractor.
func (e *Extractor) Close() error {
	e.req.Close()
	e.ans.Close()
	if e.cmd != nil && e.cmd.Process != nil {
		syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
		e.cmd.Wait()
		e.cmd.Process = nil
	}
	return nil
}

// Serve is the extractor's side (lnk-memory extract serve): it answers
// each request on in with a child of exe, on out, until in ends.
func Serve(in io.Reader, out io.Writer, exe string) error {
	kinds := map[byte]string{'d': "docx", 'p': "pdf"}
	for {
		var head [5]byte
		if _, err := io.ReadFull(in, head[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		kind, ok := kinds[head[0]]
		n := binary.BigEndian.Uint32(head[1:])
		if !ok || n > MaxDocument {
			return fmt.Errorf("a request it cannot serve (%q, %d bytes)", head[0], n)
		}
		doc := make([]byte, n)
		if _, err := io.ReadFull(in, doc); err != nil {
			return err
		}
		text, err := Run(context.Background(), exe, kind, doc)
		status, body := byte('o'), []byte(text)
		if err != nil {
			status, body = 'e', []byte(err.Error())
			if len(body) > 4096 {
				body = body[:4096]
			}
		}
		binary.BigEndian.PutUint32(head[1:], uint32(len(body)))
		head[0] = status
		if _, err := out.Write(append(head[:], body...)); err != nil {
			return err
		}
	}
}

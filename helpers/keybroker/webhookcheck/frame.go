package webhookcheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrHeadersTooLong is a post whose signature headers do not fit a
// frame's header line: the listener refuses it (400) rather than send
// lnk-webhook a frame it would refuse.
var ErrHeadersTooLong = errors.New("the post's signature headers are too long")

// frameHeader is a check frame's first line. Secrets and Length count
// the bytes that follow it: the secrets, in WriteSecrets' form, then the
// body.
type frameHeader struct {
	Seq     uint64            `json:"seq"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
	Secrets int               `json:"secrets"`
	Length  int               `json:"length"`
}

// WriteFrame writes one check to w in a single write: post req of the
// webhook whose secrets are s, numbered seq. What held the secrets'
// bytes is zeroed before it returns.
func WriteFrame(w io.Writer, seq uint64, s Secrets, req Request) error {
	var sb bytes.Buffer
	if err := WriteSecrets(&sb, s); err != nil {
		return err
	}
	defer clear(sb.Bytes())
	line, err := json.Marshal(frameHeader{Seq: seq, Method: req.Method, Headers: req.Headers, Secrets: sb.Len(), Length: len(req.Body)})
	if err != nil {
		return err
	}
	if len(line) > maxHeader {
		return ErrHeadersTooLong
	}
	buf := make([]byte, 0, len(line)+1+sb.Len()+len(req.Body))
	buf = append(append(append(append(buf, line...), '\n'), sb.Bytes()...), req.Body...)
	defer clear(buf)
	_, err = w.Write(buf)
	return err
}

// FrameReader reads the checks WriteFrame wrote, one after another.
type FrameReader struct{ br *bufio.Reader }

// NewFrameReader reads frames from r.
func NewFrameReader(r io.Reader) *FrameReader {
	return &FrameReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Buffered is how many bytes of the next checks were read already: none
// means the listener has sent nothing more yet.
func (fr *FrameReader) Buffered() int { return fr.br.Buffered() }

// Next reads the next check: its number, the webhook's secrets as
// WriteSecrets wrote them (the caller zeroes them; Keeper.Check does),
// and the post. An error leaves the stream where no next frame can be
// found: the reader is done.
func (fr *FrameReader) Next() (uint64, []byte, Request, error) {
	line, err := readLine(fr.br, maxHeader)
	if err != nil {
		return 0, nil, Request{}, fmt.Errorf("webhook check: %w", err)
	}
	var h frameHeader
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&h); err != nil || d.More() {
		return 0, nil, Request{}, errors.New("webhook check: its header line is not one frame header")
	}
	switch {
	case h.Length < 0 || h.Length > MaxBody:
		return 0, nil, Request{}, errors.New("webhook check: a body is 0 to 1 MiB")
	case h.Secrets < 1 || h.Secrets > maxSecretsInput:
		return 0, nil, Request{}, errors.New("webhook check: the secrets are 1 byte to 1 KiB")
	case h.Method != MethodPost && h.Method != MethodGet:
		return 0, nil, Request{}, errors.New("webhook check: only POST and GET are checked")
	}
	raw := make([]byte, h.Secrets)
	if _, err := io.ReadFull(fr.br, raw); err != nil {
		clear(raw)
		return 0, nil, Request{}, fmt.Errorf("webhook check: its secrets: %w", err)
	}
	body := make([]byte, h.Length)
	if _, err := io.ReadFull(fr.br, body); err != nil {
		clear(raw)
		return 0, nil, Request{}, fmt.Errorf("webhook check: its body: %w", err)
	}
	return h.Seq, raw, Request{Method: h.Method, Headers: h.Headers, Length: h.Length, Body: body}, nil
}

// readLine reads one line of at most max bytes, without its newline.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		part, isPrefix, err := br.ReadLine()
		if err != nil {
			return nil, err
		}
		line = append(line, part...)
		if len(line) > max {
			return nil, errors.New("a line is too long")
		}
		if !isPrefix {
			return line, nil
		}
	}
}

// maxVerdict bounds a verdict's line, and maxReason its reason.
const (
	maxVerdict = 4 << 10
	maxReason  = 512
)

// verdictLine is a verdict on the wire.
type verdictLine struct {
	Seq uint64 `json:"seq"`
	Verdict
}

// WriteVerdict writes check seq's verdict as one line.
func WriteVerdict(w io.Writer, seq uint64, v Verdict) error {
	if len(v.Reason) > maxReason {
		v.Reason = v.Reason[:maxReason]
	}
	line, err := json.Marshal(verdictLine{Seq: seq, Verdict: v})
	if err != nil {
		return err
	}
	_, err = w.Write(append(line, '\n'))
	return err
}

// VerdictReader reads the verdicts lnk-webhook wrote.
type VerdictReader struct{ br *bufio.Reader }

// NewVerdictReader reads verdicts from r.
func NewVerdictReader(r io.Reader) *VerdictReader {
	return &VerdictReader{br: bufio.NewReaderSize(r, 4096)}
}

// Next reads the next verdict: a status the listener knows, a 200 with
// an id and a scheme, a reason of at most 512 bytes. Anything else ends
// the reader: what wrote it is not to be believed further.
func (vr *VerdictReader) Next() (uint64, Verdict, error) {
	line, err := readLine(vr.br, maxVerdict)
	if err != nil {
		return 0, Verdict{}, fmt.Errorf("webhook verdict: %w", err)
	}
	var v verdictLine
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil || d.More() {
		return 0, Verdict{}, errors.New("webhook verdict: not one verdict")
	}
	switch {
	case len(v.Reason) > maxReason:
		return 0, Verdict{}, errors.New("webhook verdict: its reason is too long")
	case v.Status == StatusOK && (v.ID == "" || (v.Scheme != "link" && v.Scheme != "github")):
		return 0, Verdict{}, errors.New("webhook verdict: a 200 names the post's id and scheme")
	case v.Status == StatusOK:
	case v.Status == StatusBadRequest, v.Status == StatusUnauthorized, v.Status == StatusServiceUnavailable:
		if v.ID != "" || v.Scheme != "" {
			return 0, Verdict{}, errors.New("webhook verdict: a refusal names no id")
		}
	default:
		return 0, Verdict{}, fmt.Errorf("webhook verdict: status %d is none a check gives", v.Status)
	}
	return v.Seq, v.Verdict, nil
}

package webhookcheck

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"runtime"
	"strconv"
	"time"

	"lnk.dev/lnk/internal/secret"
)

const maxSecretsInput = 1024

// WriteSecrets writes s as lnk-webhook reads it on its stdin: the current
// secret's text on a line, then, during a roll, the previous one and its
// expiry (Unix seconds) on a second.
func WriteSecrets(w io.Writer, s Secrets) error {
	defer runtime.KeepAlive(s)
	b := append([]byte(nil), s.Current.Bytes()...)
	b = append(b, '\n')
	if s.Previous != nil {
		b = append(b, s.Previous.Bytes()...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, s.PreviousUntil.Unix(), 10)
		b = append(b, '\n')
	}
	_, err := w.Write(b)
	clear(b)
	return err
}

// ReadSecrets reads what WriteSecrets wrote.
func ReadSecrets(r io.Reader) (Secrets, error) {
	buf, err := io.ReadAll(io.LimitReader(bufio.NewReader(r), maxSecretsInput+1))
	defer clear(buf)
	if err != nil || len(buf) > maxSecretsInput {
		return Secrets{}, errors.New("webhook secrets: unreadable or too long")
	}
	lines := bytes.Split(bytes.TrimSuffix(buf, []byte("\n")), []byte("\n"))
	if len(lines) < 1 || len(lines) > 2 || len(lines[0]) == 0 {
		return Secrets{}, errors.New("webhook secrets: one or two lines")
	}
	var s Secrets
	if s.Current, err = secret.New(append([]byte(nil), lines[0]...)); err != nil {
		return Secrets{}, err
	}
	if len(lines) == 2 {
		i := bytes.LastIndexByte(lines[1], ' ')
		if i <= 0 {
			s.Current.Destroy()
			return Secrets{}, errors.New("webhook secrets: a previous secret needs its expiry")
		}
		until, err := strconv.ParseInt(string(lines[1][i+1:]), 10, 64)
		if err != nil {
			s.Current.Destroy()
			return Secrets{}, errors.New("webhook secrets: a malformed expiry")
		}
		if s.Previous, err = secret.New(append([]byte(nil), lines[1][:i]...)); err != nil {
			s.Current.Destroy()
			return Secrets{}, err
		}
		s.PreviousUntil = time.Unix(until, 0)
	}
	return s, nil
}

// Destroy zeroes both secrets.
func (s Secrets) Destroy() {
	s.Current.Destroy()
	s.Previous.Destroy()
}

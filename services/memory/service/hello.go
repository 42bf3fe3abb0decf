package service

import (
	"errors"
	"fmt"
	"io"

	"lnk.dev/lnk/services/memory/memsock"
)

// Hello is the session's first line's beginning; the agent's ID follows,
// then a newline: "lnk-memory/1 agent 7f3a9c\n".
const Hello = "lnk-memory/1 agent "

// StopLine, as a session's whole first line, asks the service to end.
const StopLine = memsock.StopLine

// NeedPrefix, then an agent ID and a newline, asks whether the service
// serves that agent (memsock.Need).
const NeedPrefix = memsock.NeedPrefix

// maxHello bounds the first line, newline included.
const maxHello = len(Hello) + maxID + 1

// maxID bounds an agent ID.
const maxID = memsock.MaxID

// ParseHello is the agent ID the session's first line names. It is
// strict: exactly Hello, then an ID of 1 to 64 lower-case letters,
// digits and '-' (not first), then "\n" and nothing after it.
func ParseHello(line []byte) (string, error) { return parseIDLine(Hello, line) }

// ParseNeed is the agent ID a need line (NeedPrefix) names, as strict
// as ParseHello.
func ParseNeed(line []byte) (string, error) { return parseIDLine(NeedPrefix, line) }

// parseIDLine is the ID of a line that is exactly prefix, an ID and "\n".
func parseIDLine(prefix string, line []byte) (string, error) {
	if len(line) > len(prefix)+maxID+1 {
		return "", fmt.Errorf("the session's first line is longer than %d bytes", len(prefix)+maxID+1)
	}
	if len(line) == 0 || line[len(line)-1] != '\n' {
		return "", errors.New("the session's first line has no end")
	}
	body := string(line[:len(line)-1])
	if len(body) < len(prefix) || body[:len(prefix)] != prefix {
		return "", fmt.Errorf("the session's first line is not %q<agent id>", prefix)
	}
	id := body[len(prefix):]
	if err := CheckID(id); err != nil {
		return "", err
	}
	return id, nil
}

// CheckID refuses what is not an agent ID as Link makes them.
func CheckID(id string) error { return memsock.CheckID(id) }

// readHello reads the first line one byte at a time, so that nothing
// past its newline is taken from the session's stream.
func readHello(r io.Reader) ([]byte, error) {
	var line []byte
	b := make([]byte, 1)
	for len(line) <= maxHello {
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, fmt.Errorf("reading the session's first line: %w", err)
		}
		line = append(line, b[0])
		if b[0] == '\n' {
			return line, nil
		}
	}
	return line, nil
}

// CheckOwner refuses what cannot be an owner's name (memsock.CheckOwner).
func CheckOwner(name string) error { return memsock.CheckOwner(name) }

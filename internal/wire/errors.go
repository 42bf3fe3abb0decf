package wire

import (
	"errors"
	"fmt"
)

// ErrClosed is returned to every caller waiting on a channel that died or
// was closed; errors.Is(err, ErrClosed) tells a dead peer from a refusal.
var ErrClosed = errors.New("channel closed")

// Error is a handler's refusal as it travels back to the caller: a code a
// client package maps to its own typed errors, and a one-line message.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Message
}

// Errorf makes an [Error] with code and a formatted message.
func Errorf(code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// CodeInternal is the code of a handler error that was not an [*Error].
const CodeInternal = "internal"

// toWireError turns a handler's error into what is sent back.
func toWireError(err error) *Error {
	var we *Error
	if errors.As(err, &we) {
		return &Error{Code: we.Code, Message: err.Error()}
	}
	return &Error{Code: CodeInternal, Message: err.Error()}
}

func errorsIsClosed(err error) bool { return errors.Is(err, ErrClosed) }

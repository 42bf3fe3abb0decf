// Package localmodel finds the models served on this machine's loopback:
// Ollama (GET 127.0.0.1:11434/api/tags), llama.cpp's llama-server (GET
// 127.0.0.1:8080/v1/models, or /props), and Link's built-in model where
// ~/.lnk/models/builtin.json says it runs. `lnk model list` prints them.
//
// # Security
//
// It sends only GETs, only to 127.0.0.1, each with a short timeout,
// following no redirect and reading at most [MaxAnswer] of an answer. A
// port that doesn't answer, or answers something else, is left out; the
// built-in's record is read never through a link and only when it is
// the owner's, 600, and names a loopback port.
package localmodel

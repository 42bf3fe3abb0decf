// Package fuzz keeps Link's fuzzing honest. Fuzz targets live beside the
// parser they test (go test's own layout), each with a seed corpus in
// that package's testdata/fuzz/<Target>/ which plain `go test` — and so
// `make test` — replays. This package's test fails when a Fuzz target has
// no seeds; `make fuzz` (scripts/fuzz.sh) runs every target longer.
package fuzz

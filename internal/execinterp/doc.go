// Package execinterp reads what a program needs besides itself to run:
// the interpreter its #! line names, or an ELF program's PT_INTERP path
// (its dynamic loader), from the program's first page alone.
//
// It parses bytes a program's author chose — in a sandbox, possibly the
// agent — so every offset is checked against the bytes given and nothing
// is trusted; FuzzInterpreterOf keeps it so. It is small on purpose, in
// place of debug/elf, whose package initialisation every confined
// program and sandbox start would otherwise pay for.
package execinterp

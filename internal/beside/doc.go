// Package beside finds Link's programs: all of them live in one folder
// (make install and the package put them there), the folder of the
// running program as /proc/self/exe names it, links resolved. Link never
// looks one of its programs up on PATH.
//
// # Security
//
// Holds nothing. Trusts the install folder (written by the owner or root,
// and denied to every sandbox). A program missing there, or one that is
// not a regular executable file, is refused with ErrMissing naming the
// path, never left out in silence nor left for an exec to fail at with a
// message of its own.
package beside

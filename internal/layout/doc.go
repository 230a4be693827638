// Package layout holds the tree's package boundaries as tests: which packages may link which
// (layout_test.go). It has no code; a boundary that is crossed fails `go test ./...`.
package layout

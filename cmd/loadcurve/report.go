package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/report"
	"github.com/loadcurve/loadcurve/sweep"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "re-derive a result from its records file, optionally under other objectives or analysis settings",
		ArgsUsage: "DIR|records.jsonl",
		Description: "Reads records.jsonl (the raw truth, whose header holds every setting the result was made with) and\n" +
			"recomputes the summaries, the curve, the capacity and the operating point without sending any load. With no\n" +
			"option changed it reproduces the original result exactly. It prints the result; --out DIR also writes its\n" +
			"files there (a directory holding a result is refused unless --replace).",
		Flags:  concat(objectiveFlags(), outputFlags(), []cli.Flag{boundedMemoryFlag("read the file one line at a time and summarise on the fly, for files too big for memory")}),
		Action: reportAction,
	}
}

// resolveRecords accepts a directory holding records.jsonl or the file itself.
func resolveRecords(arg string) (dir, path string, err error) {
	fi, err := os.Stat(arg)
	if err != nil {
		return "", "", usagef("%s: %v", arg, err)
	}
	if fi.IsDir() {
		return arg, filepath.Join(arg, sweep.RecordsName), nil
	}
	return filepath.Dir(arg), arg, nil
}

// loaded is a result rebuilt from its records.
type loaded struct {
	dir, path string
	file      *records.File // nil when scanned in bounded memory
	result    *sweep.Result
}

// loadResult reads a records file and rebuilds its result under the settings its header states,
// overridden by the flags the user set (c nil: none), in bounded memory when asked. Warnings of
// the reader go to warn.
func loadResult(c *cli.Context, arg string, positional int, bounded bool, warn io.Writer) (*loaded, error) {
	dir, path, err := resolveRecords(arg)
	if err != nil {
		return nil, err
	}
	h, err := readHeader(path)
	if err != nil {
		return nil, usagef("%s: %v", arg, err)
	}
	base, notes, err := sweep.SettingsOf(h)
	if err != nil {
		return nil, usagef("%s: %v", arg, err)
	}
	s := base
	if c != nil {
		var errs []error
		if s, errs = readSettings(c, positional, base); len(errs) > 0 {
			return nil, usageErrors(errs)
		}
		if c.Bool("bounded-memory") {
			if _, err := boundedMemory(c, s.Measure); err != nil {
				return nil, err
			}
		}
	}
	l := &loaded{dir: dir, path: path}
	var warnings []string
	if bounded {
		l.result, warnings, err = sweep.ScanFile(path, s)
	} else {
		l.file, err = records.ReadFile(path)
		if err == nil {
			l.result, warnings = sweep.FromFile(l.file, s), l.file.Warnings
		}
	}
	if err != nil {
		return nil, usageError{flagError(err)}
	}
	if len(l.result.Tiers) == 0 {
		return nil, usagef("%s has no tier: it holds no measurement", path)
	}
	for _, w := range warnings {
		fmt.Fprintf(warn, "loadcurve: warning: %s: %s\n", path, w)
	}
	l.result.Notes = append(notes, l.result.Notes...)
	return l, nil
}

// readHeader reads the header line of a records file.
func readHeader(path string) (records.Header, error) {
	var h records.Header
	fh, err := os.Open(path)
	if err != nil {
		return h, err
	}
	defer fh.Close()
	errStop := fmt.Errorf("header read")
	_, err = records.Scan(fh, records.Visitor{Header: func(x records.Header) error { h = x; return errStop }})
	if err != nil && h.Kind == "" {
		return h, err
	}
	return h, nil
}

func reportAction(c *cli.Context) error {
	if c.Args().Len() < 1 || (c.Args().Len() > 1 && !c.IsSet("goodput")) {
		return usagef("report takes one argument, a result directory or records.jsonl; got %d", c.Args().Len())
	}
	format, err := outputFormat(c)
	if err != nil {
		return usageError{err}
	}
	l, err := loadResult(c, c.Args().First(), 1, c.Bool("bounded-memory"), c.App.ErrWriter)
	if err != nil {
		return err
	}
	if out := c.String("out"); out != "" {
		if err := prepareReportOut(out, l, c.Bool("replace")); err != nil {
			return err
		}
		if err := writeResult(out, l.result); err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "loadcurve: wrote the result derived from %s to %s\n", l.path, out)
	}
	return report.Print(c.App.Writer, format, l.result, c.Bool("verbose"))
}

// prepareReportOut makes out ready for a derived result: a directory holding a result is refused
// unless replace, which removes its derived files (and its records too, unless they are the
// source being reported).
func prepareReportOut(out string, l *loaded, replace bool) error {
	held, err := sweep.HoldsResult(out)
	if err != nil {
		return fmt.Errorf("--out %s: %w", out, err)
	}
	if held {
		if !replace {
			return usagef("--out %s already holds a result: choose another directory, or pass --replace to replace its derived files", out)
		}
		keep := ""
		if samePath(filepath.Join(out, sweep.RecordsName), l.path) {
			keep = l.path
		}
		if err := clearDerived(out, keep); err != nil {
			return fmt.Errorf("--out %s: %w", out, err)
		}
	}
	return os.MkdirAll(out, 0o755)
}

// clearDerived clears a result directory, keeping the records file keep when it is the source.
func clearDerived(dir, keep string) error {
	if keep == "" {
		return sweep.ClearResult(dir)
	}
	tmp := keep + ".keep"
	if err := os.Rename(keep, tmp); err != nil {
		return err
	}
	err := sweep.ClearResult(dir)
	if rerr := os.Rename(tmp, keep); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

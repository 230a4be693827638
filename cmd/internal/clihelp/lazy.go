package clihelp

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"
)

// A command's help template, as SetHelp leaves it, is a marker naming the Options and width
// its options are rendered with; urfave/cli's HelpPrinter, wrapped once, renders them when the
// help is shown. The registry holds one entry per distinct (Options, width): a program has one
// or two, however many apps it builds.
const lazyPrefix = "\x00clihelp options "

var (
	installPrinter sync.Once
	lazyMu         sync.Mutex
	lazyHelps      []lazyHelp
)

type lazyHelp struct {
	key   string // the Options and width, printed
	o     Options
	width int
}

// lazyTemplate registers (o, width) and returns the marker that names it; the first call wraps
// cli.HelpPrinter, before any app whose commands carry a marker runs.
func lazyTemplate(o Options, width int) string {
	installPrinter.Do(func() {
		next := cli.HelpPrinter
		cli.HelpPrinter = func(w io.Writer, templ string, data any) {
			if cmd, ok := data.(*cli.Command); ok {
				if h, ok := lazyLookup(templ); ok {
					templ = h.o.helpTemplate(cmd.Flags, h.width, false)
				}
			}
			next(w, templ, data)
		}
	})
	key := fmt.Sprintf("%#v %d", o, width)
	lazyMu.Lock()
	defer lazyMu.Unlock()
	i := 0
	for i < len(lazyHelps) && lazyHelps[i].key != key {
		i++
	}
	if i == len(lazyHelps) {
		lazyHelps = append(lazyHelps, lazyHelp{key: key, o: o, width: width})
	}
	return lazyPrefix + strconv.Itoa(i)
}

// lazyLookup returns the entry a marker names.
func lazyLookup(templ string) (lazyHelp, bool) {
	n, ok := strings.CutPrefix(templ, lazyPrefix)
	if !ok {
		return lazyHelp{}, false
	}
	i, err := strconv.Atoi(n)
	lazyMu.Lock()
	defer lazyMu.Unlock()
	if err != nil || i < 0 || i >= len(lazyHelps) {
		return lazyHelp{}, false
	}
	return lazyHelps[i], true
}

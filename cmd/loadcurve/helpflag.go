package main

import (
	"flag"

	"github.com/urfave/cli/v2"
)

// helpFlag is --help (-h) without state. urfave/cli's own HelpFlag is one *cli.BoolFlag shared by
// every app, and its Apply writes to it: two apps run at once (the tests run several in one
// process) race on it.
type helpFlag struct{}

func (helpFlag) Apply(set *flag.FlagSet) error {
	set.Bool("help", false, "show help")
	set.Bool("h", false, "show help")
	return nil
}
func (helpFlag) Names() []string { return []string{"help", "h"} }
func (helpFlag) IsSet() bool     { return false }
func (helpFlag) IsVisible() bool { return true }
func (helpFlag) String() string  { return "--help, -h\tshow help" }

func init() { cli.HelpFlag = helpFlag{} }

package workloads_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/workloads"
)

// TestHostileFilesAreRefusedBriefly: request and trace files made to cost their reader. A line
// (a ShareGPT entry) that never ends is refused once it passes the bound on a line (lowered
// here from workloads.MaxLineLen to 1 MiB), having read little more; values of 100 kB where a
// word belongs are refused with messages of a few hundred bytes, the value quoted cut.
func TestHostileFilesAreRefusedBriefly(t *testing.T) {
	big := strings.Repeat("k", 100_000)
	defer workloads.SetMaxLineLen(1 << 20)() // 1 MiB: an endless line costs little to refuse
	read := func(format string) func(r io.Reader) error {
		return func(r io.Reader) error {
			var err error
			switch format {
			case "jsonl":
				_, err = workloads.ReadJSONL(r, "f.jsonl")
			case "sharegpt":
				_, err = workloads.ReadShareGPT(r, "f.json", workloads.DefaultShareGPTFilter())
			default:
				_, err = workloads.ReadTrace(r, "f", format, 1)
			}
			return err
		}
	}
	tests := []struct {
		name    string
		read    func(io.Reader) error
		head    string // then an endless run of 'a's when endless
		endless bool
		says    []string
	}{
		{name: "a JSONL line that never ends", read: read("jsonl"), head: `{"prompt":"`, endless: true, says: []string{"line 1 is longer than 1 MiB"}},
		{name: "a ShareGPT entry that never ends", read: read("sharegpt"), head: `[{"id":"a","conversations":[{"from":"human","value":"`, endless: true,
			says: []string{"the entry at line 1 or after is longer than 1 MiB"}},
		{name: "an Azure trace row that never ends", read: read(workloads.TraceAzure), head: "TIMESTAMP,ContextTokens,GeneratedTokens\n1,", endless: true,
			says: []string{"line 2 is longer than 1 MiB"}},
		{name: "a Mooncake trace line that never ends", read: read(workloads.TraceMooncake), head: `{"timestamp":0,"input_length":1,"output_length":1}` + "\n" + `{"x":"`, endless: true,
			says: []string{"line 2 is longer than 1 MiB"}},
		{name: "a JSONL key of 10 MB", read: read("jsonl"), head: `{"prompt":"hi","` + big + `":1}` + "\n", says: []string{`unknown field "kkkk`, "…(100000 bytes)"}},
		{name: "a message role of 10 MB in a session", read: read("jsonl"), head: `{"session":1,"messages":[{"role":"` + big + `","content":"x"}]}` + "\n", says: []string{`role "kkk`}},
		{name: "a ShareGPT id of 10 MB", read: read("sharegpt"), head: `[{"id":"` + big + `","conversations":7}]`, says: []string{`(id "kkk`}},
		{name: "an Azure TIMESTAMP of 10 MB", read: read(workloads.TraceAzure), head: "TIMESTAMP,ContextTokens,GeneratedTokens\n" + big + ",1,1\n", says: []string{`TIMESTAMP "kkk`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var src io.Reader = strings.NewReader(tc.head)
			a := &endlessA{}
			if tc.endless {
				src = io.MultiReader(src, a)
			}
			err := tc.read(src)
			if err == nil {
				t.Fatal("read, want a refusal")
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%.400q lacks %q", err, s)
				}
			}
			if len(err.Error()) > 400 {
				t.Errorf("a message of %d bytes", len(err.Error()))
			}
			var long *workloads.LineTooLongError
			if tc.endless && !errors.As(err, &long) {
				t.Errorf("%v is not a *LineTooLongError", err)
			}
			if a.n > 3<<20 {
				t.Errorf("%d bytes read of an endless line", a.n)
			}
		})
	}
}

// endlessA reads as an endless run of 'a's.
type endlessA struct{ n int }

func (e *endlessA) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], aaaa)
	}
	e.n += n
	return n, nil
}

var aaaa = []byte(strings.Repeat("a", 64<<10))

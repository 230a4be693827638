//go:build !race

// Built without the race detector only: the test decodes YAML into Kubernetes' types, which
// have nothing concurrent to check and cost a clean machine ~30 s to compile under -race. The
// test command's native pass (README, .ci/run) runs it.

package kubernetes_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/loadcurve/loadcurve/loadgen/shard"
)

// objects are the decoded manifests of this directory.
type objects struct {
	jobs       map[string]*batchv1.Job
	pvcs       map[string]*corev1.PersistentVolumeClaim
	configMaps map[string]*corev1.ConfigMap
	pods       map[string]*corev1.Pod
}

// decode strictly decodes one YAML document into the official type of its apiVersion and kind:
// an unknown or misspelled field, or a duplicate one, is an error.
func decode(doc []byte, o *objects) (string, error) {
	var probe struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &probe); err != nil {
		return "", err
	}
	id := probe.APIVersion + " " + probe.Kind + " " + probe.Metadata.Name
	if probe.Metadata.Name == "" {
		return id, fmt.Errorf("%s has no metadata.name", id)
	}
	var err error
	switch probe.APIVersion + "/" + probe.Kind {
	case "batch/v1/Job":
		v := &batchv1.Job{}
		err = yaml.UnmarshalStrict(doc, v)
		o.jobs[v.Name] = v
	case "v1/PersistentVolumeClaim":
		v := &corev1.PersistentVolumeClaim{}
		err = yaml.UnmarshalStrict(doc, v)
		o.pvcs[v.Name] = v
	case "v1/ConfigMap":
		v := &corev1.ConfigMap{}
		err = yaml.UnmarshalStrict(doc, v)
		o.configMaps[v.Name] = v
	case "v1/Pod":
		v := &corev1.Pod{}
		err = yaml.UnmarshalStrict(doc, v)
		o.pods[v.Name] = v
	default:
		return id, fmt.Errorf("%s: no official type is mapped for this apiVersion/kind in the test", id)
	}
	return id, err
}

// documents splits a multi-document YAML file.
func documents(b []byte) [][]byte {
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

func stripComments(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func load(t *testing.T) *objects {
	t.Helper()
	o := &objects{jobs: map[string]*batchv1.Job{}, pvcs: map[string]*corev1.PersistentVolumeClaim{},
		configMaps: map[string]*corev1.ConfigMap{}, pods: map[string]*corev1.Pod{}}
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests found: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range documents(b) {
			if id, err := decode(doc, o); err != nil {
				t.Errorf("%s: %s: %v", f, id, err)
			}
		}
	}
	return o
}

func TestManifestsDecodeStrictly(t *testing.T) {
	o := load(t)
	for _, name := range []string{"loadcurve-shards", "loadcurve-merge"} {
		if o.jobs[name] == nil {
			t.Errorf("no Job %q", name)
		}
	}
	if o.pvcs["loadcurve-results"] == nil || o.configMaps["loadcurve-run"] == nil || o.pods["loadcurve-results"] == nil {
		t.Errorf("missing objects: PVC %v, ConfigMap %v, Pod %v", o.pvcs["loadcurve-results"] != nil,
			o.configMaps["loadcurve-run"] != nil, o.pods["loadcurve-results"] != nil)
	}
}

// The strict decoding must catch typos, or the test above proves nothing.
func TestStrictDecodingCatchesTypos(t *testing.T) {
	b, err := os.ReadFile("job-shards.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, from, to string }{
		{"misspelled field", "completionMode:", "completionMod:"},
		{"field at the wrong level", "  backoffLimit: 0", "  template:\n    backoffLimit: 0\n  backoffLimitX: 0"},
		{"duplicate field", "  parallelism: 3", "  parallelism: 3\n  parallelism: 4"},
		{"wrong type", "completions: 3", "completions: three"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := bytes.Replace(b, []byte(tt.from), []byte(tt.to), 1)
			if bytes.Equal(bad, b) {
				t.Fatalf("%q not found in job-shards.yaml", tt.from)
			}
			o := &objects{jobs: map[string]*batchv1.Job{}}
			if _, err := decode(bad, o); err == nil {
				t.Errorf("decoded without error after replacing %q with %q", tt.from, tt.to)
			}
		})
	}
}

func deref(p *int32) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// flagValue returns the value of --name=value in args.
func flagValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// checkEnvWiring: every $(VAR) of the container's command and args is declared in its env, and
// every ConfigMap or field reference resolves.
func checkEnvWiring(t *testing.T, o *objects, where string, c corev1.Container) map[string]corev1.EnvVar {
	t.Helper()
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		if _, dup := env[e.Name]; dup {
			t.Errorf("%s: env %s declared twice", where, e.Name)
		}
		env[e.Name] = e
		if e.ValueFrom == nil {
			continue
		}
		if ref := e.ValueFrom.ConfigMapKeyRef; ref != nil {
			cm := o.configMaps[ref.Name]
			if cm == nil {
				t.Errorf("%s: env %s refers to ConfigMap %q, which is not among the manifests", where, e.Name, ref.Name)
			} else if _, ok := cm.Data[ref.Key]; !ok {
				t.Errorf("%s: env %s refers to key %q, which ConfigMap %q lacks", where, e.Name, ref.Key, ref.Name)
			}
		}
	}
	for _, a := range slices.Concat(c.Command, c.Args) {
		for _, m := range varRef.FindAllStringSubmatch(a, -1) {
			if _, ok := env[m[1]]; !ok {
				t.Errorf("%s: argument %q refers to $(%s), which the container does not declare: Kubernetes would pass it literally", where, a, m[1])
			}
		}
	}
	return env
}

func TestShardJobWiring(t *testing.T) {
	o := load(t)
	job := o.jobs["loadcurve-shards"]
	if job == nil {
		t.Fatal("no Job loadcurve-shards")
	}
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		mode := "unset"
		if s.CompletionMode != nil {
			mode = string(*s.CompletionMode)
		}
		t.Errorf("completionMode %s, want Indexed", mode)
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism || *s.Completions < 1 {
		t.Fatalf("completions %s, parallelism %s: want equal and >= 1 (all shards run at once)", deref(s.Completions), deref(s.Parallelism))
	}
	k := int(*s.Completions)
	if s.BackoffLimit == nil || *s.BackoffLimit != 0 {
		t.Errorf("backoffLimit %s, want 0: a retried shard starts after START_AT", deref(s.BackoffLimit))
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q, want Never", pod.RestartPolicy)
	}
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Error("the pod does not require a non-root user")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	env := checkEnvWiring(t, o, "loadcurve-shards", c)

	if len(c.Args) == 0 || c.Args[0] != "sweep" {
		t.Errorf("args %q: want the sweep command first", c.Args)
	}
	// --shard=auto/k with the Job's k, as shard.Parse reads it in pod k-1.
	sv, ok := flagValue(c.Args, "shard")
	if !ok {
		t.Fatal("no --shard=auto/k argument")
	}
	t.Setenv(shard.EnvIndex, fmt.Sprint(k-1))
	if sp, err := shard.Parse(sv); err != nil || sp != (shard.Spec{Index: k - 1, Count: k}) {
		t.Errorf("--shard=%s in the last pod parses as %v, %v; want %d/%d", sv, sp, err, k-1, k)
	}
	// The index comes from the Job controller's annotation.
	idx, ok := env[shard.EnvIndex]
	if !ok || idx.ValueFrom == nil || idx.ValueFrom.FieldRef == nil ||
		idx.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("env %s is not the completion-index annotation: %+v", shard.EnvIndex, idx)
	}
	if v, _ := flagValue(c.Args, "start-at"); v != "$(START_AT)" {
		t.Errorf("--start-at=%q, want $(START_AT)", v)
	}
	out, _ := flagValue(c.Args, "out")
	if !strings.Contains(out, "$("+shard.EnvIndex+")") {
		t.Errorf("--out=%q does not include the shard index: the shards would overwrite each other", out)
	}
	if v, _ := flagValue(c.Args, "request-rates"); v == "auto" {
		t.Error("--request-rates auto: the shards would each plan their own tiers")
	}
	// The START_AT placeholder parses the way the shards will parse it.
	cm := o.configMaps["loadcurve-run"]
	if cm != nil {
		at, err := time.Parse(time.RFC3339Nano, cm.Data["START_AT"])
		if err != nil {
			t.Errorf("ConfigMap START_AT %q is not RFC 3339: %v", cm.Data["START_AT"], err)
		} else if _, err := shard.ParseStartAt(cm.Data["START_AT"], at.Add(-time.Minute)); err != nil {
			t.Errorf("ConfigMap START_AT %q is refused a minute before it: %v", cm.Data["START_AT"], err)
		}
		if cm.Data["REQUEST_RATES"] == "auto" {
			t.Error("ConfigMap REQUEST_RATES is auto: the shards would each plan their own tiers")
		}
	}
	checkResultsVolume(t, o, "loadcurve-shards", pod, c, out)
	if l := c.Resources.Limits.Cpu(); !l.IsZero() {
		t.Errorf("CPU limit %v: throttling would show as schedule lag", l)
	}
}

// checkResultsVolume: the path lies on a mount of the shared ReadWriteMany claim.
func checkResultsVolume(t *testing.T, o *objects, where string, pod corev1.PodSpec, c corev1.Container, path string) {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if !strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name != m.Name {
				continue
			}
			if v.PersistentVolumeClaim == nil {
				t.Fatalf("%s: %s is on volume %q, which is not the shared claim", where, path, v.Name)
			}
			pvc := o.pvcs[v.PersistentVolumeClaim.ClaimName]
			if pvc == nil {
				t.Fatalf("%s: claim %q is not among the manifests", where, v.PersistentVolumeClaim.ClaimName)
			}
			if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
				t.Errorf("%s: claim %q is %v, want ReadWriteMany (pods on several nodes share it)", where, pvc.Name, pvc.Spec.AccessModes)
			}
			if m.ReadOnly {
				t.Errorf("%s: %s is mounted read-only", where, m.MountPath)
			}
			return
		}
	}
	t.Errorf("%s: %s is on no volume mount: results would die with the pod", where, path)
}

func TestMergeJobWiring(t *testing.T) {
	o := load(t)
	shards, job := o.jobs["loadcurve-shards"], o.jobs["loadcurve-merge"]
	if shards == nil || job == nil {
		t.Fatal("missing Job loadcurve-shards or loadcurve-merge")
	}
	shardOut, _ := flagValue(shards.Spec.Template.Spec.Containers[0].Args, "out")
	pod := job.Spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.InitContainers) != 1 || len(pod.Containers) != 1 {
		t.Fatalf("restartPolicy %q, %d init containers, %d containers; want Never, merge then report",
			pod.RestartPolicy, len(pod.InitContainers), len(pod.Containers))
	}
	merge, report := pod.InitContainers[0], pod.Containers[0]
	checkEnvWiring(t, o, "loadcurve-merge/merge", merge)
	checkEnvWiring(t, o, "loadcurve-merge/report", report)
	if len(merge.Args) < 2 || merge.Args[0] != "merge" {
		t.Fatalf("merge args %q, want merge PATTERN --out=DIR", merge.Args)
	}
	// The merge reads exactly the shards' output directories.
	wantPattern := strings.ReplaceAll(shardOut, "$("+shard.EnvIndex+")", "*")
	if merge.Args[1] != wantPattern {
		t.Errorf("merge reads %q, but the shards write %q (pattern %q)", merge.Args[1], shardOut, wantPattern)
	}
	mergedDir, ok := flagValue(merge.Args, "out")
	if !ok || strings.HasPrefix(mergedDir, strings.TrimSuffix(wantPattern, "*")) {
		t.Errorf("merge --out=%q: want a directory apart from the shards' %q", mergedDir, wantPattern)
	}
	if len(report.Args) < 2 || report.Args[0] != "report" || report.Args[1] != mergedDir {
		t.Errorf("report args %q, want report %s", report.Args, mergedDir)
	}
	checkResultsVolume(t, o, "loadcurve-merge/merge", pod, merge, mergedDir+"/records.jsonl")
	checkResultsVolume(t, o, "loadcurve-merge/report", pod, report, mergedDir+"/report.html")
}

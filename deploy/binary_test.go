package deploy

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/vrender/vrender/internal/testenv"
)

// buildVrender builds the binary the manifests run.
func buildVrender(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "vrender")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/vrender")
	cmd.Dir = testenv.RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/vrender: %v\n%s", err, out)
	}
	return bin
}

var helpFlagRE = regexp.MustCompile(`(?m)^\s+--?([a-z][a-z0-9-]*)`)

// knownFlags lists the flags `vrender SUBCOMMAND --help` prints.
func knownFlags(t *testing.T, bin, sub string) map[string]bool {
	t.Helper()
	out, err := exec.Command(bin, sub, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("vrender %s --help: %v\n%s", sub, err, out)
	}
	flags := map[string]bool{}
	for _, m := range helpFlagRE.FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	if len(flags) < 3 {
		t.Fatalf("vrender %s --help lists no flags:\n%s", sub, out)
	}
	return flags
}

// TestArgsAreKnownFlags checks every --flag in the manifests' args against
// the help of the subcommand they run, and that the probes' paths answer
// 200 on the real binary.
func TestArgsAreKnownFlags(t *testing.T) {
	m := loadManifests(t)
	bin := buildVrender(t)
	help := map[string]map[string]bool{}
	for name, d := range m.deployments {
		for _, c := range d.Spec.Template.Spec.Containers {
			if len(c.Args) == 0 {
				t.Errorf("%s/%s has no args", name, c.Name)
				continue
			}
			sub := c.Args[0]
			if help[sub] == nil {
				help[sub] = knownFlags(t, bin, sub)
			}
			for _, a := range c.Args[1:] {
				flag, ok := strings.CutPrefix(a, "--")
				if !ok {
					continue
				}
				flag, _, _ = strings.Cut(flag, "=")
				if !help[sub][flag] {
					t.Errorf("%s/%s: `vrender %s --help` does not know --%s", name, c.Name, sub, flag)
				}
			}
		}
	}
}

var addrRE = regexp.MustCompile(`msg="?(?:serving|simulated engine serving)"? addr=(\S+)`)

func TestProbesHitRealRoutes(t *testing.T) {
	m := loadManifests(t)
	modelDir := testenv.ModelDir(t, "qwen3")
	bin := buildVrender(t)
	for name, d := range m.deployments {
		c := d.Spec.Template.Spec.Containers[0]
		// Run the container's command on loopback with a local model; the
		// engine is not needed for the probed routes.
		args := []string{c.Args[0], modelDir, "--host", "127.0.0.1", "--port", "0"}
		addr := startAndWait(t, bin, args)
		for _, p := range []*corev1.Probe{c.StartupProbe, c.ReadinessProbe, c.LivenessProbe} {
			if p == nil {
				continue
			}
			resp, err := http.Get("http://" + addr + p.HTTPGet.Path)
			if err != nil {
				t.Fatalf("%s probe %s: %v", name, p.HTTPGet.Path, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s probe GET %s answered %d", name, p.HTTPGet.Path, resp.StatusCode)
			}
		}
	}
}

// startAndWait runs bin with args until the test ends and returns the
// address it logged.
func startAndWait(t *testing.T, bin string, args []string) string {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
	})
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(logPath)
		if m := addrRE.FindSubmatch(b); m != nil {
			return string(m[1])
		}
		select {
		case <-done:
			t.Fatalf("vrender %v exited:\n%s", args, b)
		default:
		}
	}
	b, _ := os.ReadFile(logPath)
	t.Fatalf("vrender %v logged no address:\n%s", args, b)
	return ""
}

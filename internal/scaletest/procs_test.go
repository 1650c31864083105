package scaletest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testenv"
)

// proc is a child process whose output goes to a log file.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// buildVrender builds the vrender binary from this checkout into dir.
func buildVrender(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "vrender")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/vrender")
	cmd.Dir = testenv.RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/vrender: %v\n%s", err, out)
	}
	return bin
}

// start runs a program until the test ends (killed at cleanup).
func start(t *testing.T, dir, name, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	f, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill(t) })
	return p
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill(t *testing.T) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Errorf("%s (pid %d) did not die", p.name, p.cmd.Process.Pid)
	}
}

func (p *proc) logText() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// waitLog waits for re to match the process's log and returns its first
// submatch.
func (p *proc) waitLog(t *testing.T, re *regexp.Regexp, timeout time.Duration) string {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; {
		if m := re.FindStringSubmatch(p.logText()); m != nil {
			return m[1]
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited early:\n%s", p.name, p.logText())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not log %s within %s:\n%s", p.name, re, timeout, p.logText())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freePort returns a loopback port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// haproxyConfig balances round-robin over the replicas with no affinity
// (no cookie, no hash, a fresh choice per HTTP request), health-checking
// GET /health every 200 ms. A connection refused by a dead replica is
// retried on another (redispatch); a request already sent to it is not,
// as a POST is not idempotent.
func haproxyConfig(port int, replicas []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `global
    maxconn 4096

defaults
    mode http
    option redispatch
    retries 3
    timeout connect 1s
    timeout client 60s
    timeout server 60s

frontend vrender
    bind 127.0.0.1:%d
    default_backend replicas

backend replicas
    balance roundrobin
    option httpchk GET /health
    http-check expect status 200
    default-server inter 200ms fall 2 rise 2
`, port)
	for i, r := range replicas {
		fmt.Fprintf(&b, "    server r%d %s check\n", i, r)
	}
	return b.String()
}

// haproxyPath finds haproxy (Debian installs it in /usr/sbin, often off a
// user's PATH), skipping the test loudly when absent (failing under CI=true).
func haproxyPath(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/haproxy"); err == nil {
		return "/usr/sbin/haproxy"
	}
	testenv.Missing(t, "haproxy (the horizontal-scale test needs a real load balancer)", "apt-get install -y haproxy (.ci/run does)")
	return ""
}

// waitHealthy polls url until it answers 200.
func waitHealthy(ctx context.Context, t *testing.T, url string) {
	t.Helper()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never answered 200: %v", url, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// runCmd runs a program to completion and returns its combined output.
func runCmd(name string, args ...string) ([]byte, error) {
	return exec.Command(name, args...).CombinedOutput()
}

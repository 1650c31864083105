package deploy

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// manifests are every object under deploy/, decoded strictly.
type manifests struct {
	deployments  map[string]*appsv1.Deployment
	services     map[string]*corev1.Service
	configMaps   map[string]*corev1.ConfigMap
	pvcs         map[string]*corev1.PersistentVolumeClaim
	hpas         map[string]*autoscalingv2.HorizontalPodAutoscaler
	pdbs         map[string]*policyv1.PodDisruptionBudget
	files, kinds []string
}

// wantAPIVersion is the one API version each kind may use.
var wantAPIVersion = map[string]string{
	"Deployment": "apps/v1", "Service": "v1", "ConfigMap": "v1", "PersistentVolumeClaim": "v1",
	"HorizontalPodAutoscaler": "autoscaling/v2", "PodDisruptionBudget": "policy/v1",
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

func loadManifests(t *testing.T) *manifests {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	m := &manifests{deployments: map[string]*appsv1.Deployment{}, services: map[string]*corev1.Service{},
		configMaps: map[string]*corev1.ConfigMap{}, pvcs: map[string]*corev1.PersistentVolumeClaim{},
		hpas: map[string]*autoscalingv2.HorizontalPodAutoscaler{}, pdbs: map[string]*policyv1.PodDisruptionBudget{},
		files: files}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range docSep.Split(string(data), -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			where := fmt.Sprintf("%s document %d", f, i+1)
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			if want, ok := wantAPIVersion[tm.Kind]; !ok || tm.APIVersion != want {
				t.Fatalf("%s: kind %q apiVersion %q (want one of %v)", where, tm.Kind, tm.APIVersion, wantAPIVersion)
			}
			m.kinds = append(m.kinds, tm.Kind)
			var name string
			switch tm.Kind {
			case "Deployment":
				name = decode(t, where, doc, m.deployments)
			case "Service":
				name = decode(t, where, doc, m.services)
			case "ConfigMap":
				name = decode(t, where, doc, m.configMaps)
			case "PersistentVolumeClaim":
				name = decode(t, where, doc, m.pvcs)
			case "HorizontalPodAutoscaler":
				name = decode(t, where, doc, m.hpas)
			case "PodDisruptionBudget":
				name = decode(t, where, doc, m.pdbs)
			}
			if name == "" {
				t.Errorf("%s: %s without a name", where, tm.Kind)
			}
		}
	}
	return m
}

// decode unmarshals doc strictly (unknown or duplicate fields fail) into a
// new T and files it by name.
func decode[T any, P interface {
	*T
	GetName() string
}](t *testing.T, where, doc string, into map[string]P) string {
	t.Helper()
	obj := P(new(T))
	if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
		t.Fatalf("%s: strict decode: %v", where, err)
	}
	name := obj.GetName()
	if _, dup := into[name]; dup {
		t.Fatalf("%s: a second object named %q", where, name)
	}
	into[name] = obj
	return name
}

func stripComments(doc string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func TestManifestsDecodeStrictly(t *testing.T) {
	m := loadManifests(t)
	for _, kind := range []string{"Deployment", "Service", "ConfigMap", "HorizontalPodAutoscaler", "PodDisruptionBudget"} {
		if !slices.Contains(m.kinds, kind) {
			t.Errorf("no %s under deploy/", kind)
		}
	}
	if _, ok := m.deployments["vrender"]; !ok {
		t.Fatal("no Deployment vrender")
	}
	if _, ok := m.deployments["vrender-engine-sim"]; !ok {
		t.Error("no demo Deployment vrender-engine-sim")
	}
	// A misspelt field must fail, or the strictness proves nothing.
	bad := "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec:\n  selectr: {a: b}\n"
	if err := yaml.UnmarshalStrict([]byte(bad), &corev1.Service{}); err == nil {
		t.Error("strict decoding accepted an unknown field")
	}
}

func TestServicesSelectDeployments(t *testing.T) {
	m := loadManifests(t)
	for name, svc := range m.services {
		sel := labels.SelectorFromSet(svc.Spec.Selector)
		if sel.Empty() {
			t.Errorf("Service %s selects nothing", name)
			continue
		}
		var matched *appsv1.Deployment
		for _, d := range m.deployments {
			if sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				matched = d
			}
		}
		if matched == nil {
			t.Errorf("Service %s selector %v matches no Deployment's pods", name, svc.Spec.Selector)
			continue
		}
		if svc.Spec.SessionAffinity != "" && svc.Spec.SessionAffinity != corev1.ServiceAffinityNone {
			t.Errorf("Service %s has session affinity: replicas must be interchangeable", name)
		}
		for _, p := range svc.Spec.Ports {
			if !hasPort(matched.Spec.Template.Spec.Containers, p.TargetPort.String()) {
				t.Errorf("Service %s port %s targets %s, which Deployment %s does not expose", name, p.Name,
					p.TargetPort.String(), matched.Name)
			}
		}
	}
	for name, d := range m.deployments {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("Deployment %s selector does not match its pod template (%v)", name, err)
		}
	}
}

func hasPort(cs []corev1.Container, port string) bool {
	for _, c := range cs {
		for _, p := range c.Ports {
			if p.Name == port || fmt.Sprint(p.ContainerPort) == port {
				return true
			}
		}
	}
	return false
}

func TestHPAAndPDB(t *testing.T) {
	m := loadManifests(t)
	d := m.deployments["vrender"]
	if len(m.hpas) == 0 || len(m.pdbs) == 0 {
		t.Fatal("no HPA or PDB")
	}
	for name, h := range m.hpas {
		ref := h.Spec.ScaleTargetRef
		if ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || m.deployments[ref.Name] == nil {
			t.Errorf("HPA %s targets %s %s/%s, not a Deployment here", name, ref.APIVersion, ref.Kind, ref.Name)
			continue
		}
		var cpu, inflight bool
		for _, mt := range h.Spec.Metrics {
			switch {
			case mt.Type == autoscalingv2.ResourceMetricSourceType && mt.Resource.Name == corev1.ResourceCPU:
				cpu = mt.Resource.Target.AverageUtilization != nil
			case mt.Type == autoscalingv2.PodsMetricSourceType && mt.Pods.Metric.Name == "vrender_inflight_streams":
				inflight = mt.Pods.Target.AverageValue != nil
			}
		}
		if !cpu || !inflight {
			t.Errorf("HPA %s must scale on CPU utilization and vrender_inflight_streams (cpu %v, inflight %v)", name, cpu, inflight)
		}
		target := m.deployments[ref.Name]
		for _, c := range target.Spec.Template.Spec.Containers {
			if c.Resources.Requests.Cpu().IsZero() {
				t.Errorf("container %s has no CPU request: the HPA's utilization target needs one", c.Name)
			}
		}
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 2 || h.Spec.MaxReplicas < *h.Spec.MinReplicas {
			t.Errorf("HPA %s replicas %v..%d", name, h.Spec.MinReplicas, h.Spec.MaxReplicas)
		}
		for pname, p := range m.pdbs {
			if p.Spec.MinAvailable != nil && p.Spec.MinAvailable.IntValue() >= int(*h.Spec.MinReplicas) {
				t.Errorf("PDB %s minAvailable %s blocks every drain at HPA minReplicas %d", pname, p.Spec.MinAvailable, *h.Spec.MinReplicas)
			}
		}
	}
	for name, p := range m.pdbs {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("PDB %s does not select the vrender pods (%v)", name, err)
		}
	}
}

func TestPodSpecReferences(t *testing.T) {
	m := loadManifests(t)
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range m.deployments {
		spec := d.Spec.Template.Spec
		vols := map[string]corev1.Volume{}
		for _, v := range spec.Volumes {
			vols[v.Name] = v
			if v.PersistentVolumeClaim != nil && m.pvcs[v.PersistentVolumeClaim.ClaimName] == nil {
				t.Errorf("Deployment %s volume %s claims %s, which is not defined", name, v.Name, v.PersistentVolumeClaim.ClaimName)
			}
		}
		for _, c := range spec.Containers {
			env := map[string]bool{}
			for _, e := range c.Env {
				env[e.Name] = true
				if r := e.ValueFrom; r != nil && r.ConfigMapKeyRef != nil {
					cm := m.configMaps[r.ConfigMapKeyRef.Name]
					if cm == nil || cm.Data[r.ConfigMapKeyRef.Key] == "" {
						t.Errorf("%s/%s env %s reads ConfigMap %s key %s, which is not defined", name, c.Name, e.Name,
							r.ConfigMapKeyRef.Name, r.ConfigMapKeyRef.Key)
					}
				}
				if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
					// The Secret holds a key no file may carry: README.md says how to create it.
					if !bytes.Contains(readme, []byte(r.SecretKeyRef.Name)) {
						t.Errorf("%s/%s env %s reads Secret %s, which README.md does not explain", name, c.Name, e.Name, r.SecretKeyRef.Name)
					}
				}
			}
			for _, a := range c.Args {
				for _, ref := range envRefRE.FindAllStringSubmatch(a, -1) {
					if !env[ref[1]] {
						t.Errorf("%s/%s arg %q uses $(%s), which is not in env", name, c.Name, a, ref[1])
					}
				}
			}
			for _, vm := range c.VolumeMounts {
				if _, ok := vols[vm.Name]; !ok {
					t.Errorf("%s/%s mounts undefined volume %s", name, c.Name, vm.Name)
				}
			}
			for _, p := range []*corev1.Probe{c.StartupProbe, c.ReadinessProbe, c.LivenessProbe} {
				if p == nil {
					continue
				}
				if p.HTTPGet == nil || !hasPort([]corev1.Container{c}, p.HTTPGet.Port.String()) {
					t.Errorf("%s/%s has a probe that is not an HTTP GET on a container port", name, c.Name)
				}
			}
			if c.ReadinessProbe == nil || c.LivenessProbe == nil {
				t.Errorf("%s/%s lacks a readiness or liveness probe", name, c.Name)
			}
		}
	}
	d := m.deployments["vrender"]
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
		t.Fatal("vrender has no preStop pause: endpoints must drop the pod before it stops accepting")
	}
	if spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds < c.Lifecycle.PreStop.Sleep.Seconds+60 {
		t.Errorf("terminationGracePeriodSeconds %v leaves under 60s to drain streams after the %ds preStop pause",
			spec.TerminationGracePeriodSeconds, c.Lifecycle.PreStop.Sleep.Seconds)
	}
	var stateKey bool
	for _, e := range c.Env {
		stateKey = stateKey || e.Name == "VRENDER_STATE_KEY" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
	}
	if !stateKey {
		t.Error("vrender does not take VRENDER_STATE_KEY from a Secret: replicas could not resume each other's streams")
	}
}

var envRefRE = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

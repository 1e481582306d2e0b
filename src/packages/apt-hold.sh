# berth's hold on service starts while it installs: /usr/sbin/policy-rc.d denying every
# start (exit 101), marked as berth's by a line of its own; the node's own one, if it had
# one, kept aside meanwhile. Before the survey's, the install's and the unhold's sh.
apt_policy=/usr/sbin/policy-rc.d apt_kept=/usr/sbin/policy-rc.d.berth-kept
apt_mark='# berth: no service starts while berth installs packages'
# apt_ours: whether the policy-rc.d there is berth's.
apt_ours() { [ -f "$apt_policy" ] && grep -qxF "$apt_mark" "$apt_policy"; }
# apt_back: berth's removed, and the node's own put back where berth kept it aside.
apt_back() {
  if apt_ours; then rm -f "$apt_policy"; fi
  if [ -e "$apt_kept" ] && [ ! -e "$apt_policy" ]; then mv "$apt_kept" "$apt_policy"; fi
}

# pns-description: test only: break_skip_commit makes one violation; the analysis must report rule duplicate
# pns-kind: breaker
# pns-duration: 4
# pns-expect-rule: duplicate
. /workloads/lib/common.sh

traced_kmsg_load break_skip_commit 1 20

# pns-description: test only: break_drop_uncounted makes one violation; the analysis must report rule no-loss
# pns-kind: breaker
# pns-duration: 4
# pns-expect-rule: no-loss
. /workloads/lib/common.sh

traced_kmsg_load break_drop_uncounted 1 20

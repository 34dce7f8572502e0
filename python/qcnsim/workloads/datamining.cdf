# data mining flow sizes: Greenberg et al., "VL2: a scalable and flexible data center network", SIGCOMM 2009, Figure 2; points as used by the empirical traffic generator of the pFabric/PIAS/Homa line of work (datacenter/empirical-traffic-gen, VL2_CDF.txt)
# columns: flow size in bytes, cumulative probability; sizes between points are interpolated linearly
0 0
180 0.1
216 0.2
560 0.3
900 0.4
1100 0.5
1870 0.6
3160 0.7
10000 0.8
400000 0.9
3160000 0.95
100000000 0.98
1000000000 1

# Facebook Hadoop flow sizes: Roy et al., "Inside the social network's (datacenter) network", SIGCOMM 2015; points as used by the HPCC simulator (alibaba-edu/High-Precision-Congestion-Control, traffic_gen/FbHdp_distribution.txt)
# columns: flow size in bytes, cumulative probability; sizes between points are interpolated linearly
0 0
100 0.01
200 0.02
300 0.05
350 0.15
400 0.20
500 0.30
600 0.40
700 0.50
1000 0.60
2000 0.67
7000 0.70
30000 0.72
50000 0.82
80000 0.87
120000 0.90
300000 0.95
1000000 0.975
2000000 0.99
10000000 1

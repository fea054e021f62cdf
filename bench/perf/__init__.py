"""Performance: the speed table and its workload, random-number floors, other libraries' SGLD loops,
the asv machine and dashboard, PX's cost per step."""

"""Fleet audits on Ansible: ship ascenv to every node of an inventory, take each node's snapshot
with the node's own Python, gather them on the controller and fold them into one verdict per node.

``bundle`` builds what is shipped, ``playbook`` runs the shipped playbook through ansible-playbook,
``results`` reads what came back, ``verdicts`` folds it (pure)."""

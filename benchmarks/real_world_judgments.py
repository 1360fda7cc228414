"""Hand judgments of dllint's on-by-default findings on the second set of real_world.py's sources.

Each row: (source, "path:line", code, verdict, shape, reason). The verdict comes from reading
the code at the pinned commit: "true" (the rule's claim holds and its advice helps), "false"
(it does not), "debatable" (holds in some runs or only for part of the claim). ``shape`` names
the false-positive shape of FALSE_POSITIVE_SHAPES.md (S1-S6: issue 10's shapes; T: DL202's
threshold, issue 10 item 4; N1...: new ones), empty for true positives.

real_world.py --judge matches findings against these rows (the sources are pinned, so lines
do not move) and reports precision per rule, plus any finding no row judges.
"""

from __future__ import annotations

T, F, D = "true", "false", "debatable"

JUDGMENTS: tuple[tuple[str, str, str, str, str, str], ...] = (
    # --- facebookresearch/detr
    ("facebookresearch+detr", "main.py:155", "DL201", T, "", "train loader, train_one_epoch per epoch (main.py:196)"),
    ("facebookresearch+detr", "main.py:157", "DL201", T, "", "val loader, evaluate() every epoch (main.py:214)"),
    # --- facebookresearch/mae
    ("facebookresearch+mae", "main_finetune.py:141", "DL202", F, "T", "--num_workers 10 is per GPU in a DDP script"),
    ("facebookresearch+mae", "main_finetune.py:202", "DL201", T, "", "train loader per epoch (main_finetune.py:313)"),
    ("facebookresearch+mae", "main_finetune.py:210", "DL201", T, "", "val loader, evaluate() every epoch (:325)"),
    ("facebookresearch+mae", "main_linprobe.py:99", "DL202", F, "T", "--num_workers 10 per GPU (DDP)"),
    ("facebookresearch+mae", "main_linprobe.py:173", "DL201", T, "", "train loader per epoch (:273)"),
    ("facebookresearch+mae", "main_linprobe.py:181", "DL201", T, "", "val loader every epoch (:285)"),
    ("facebookresearch+mae", "main_pretrain.py:90", "DL202", F, "T", "--num_workers 10 per GPU (DDP)"),
    ("facebookresearch+mae", "main_pretrain.py:147", "DL201", T, "", "train loader per epoch (:191)"),
    # DL301, new in the final run (project root named): the val sampler is iterated by evaluate() every epoch
    ("facebookresearch+mae", "main_finetune.py:188", "DL301", D, "",
     "--dist_eval val DistributedSampler(shuffle=True), no set_epoch: the order repeats every epoch as claimed, "
     "but evaluate() (:325) averages over the whole set, so set_epoch changes no result"),
    ("facebookresearch+mae", "main_linprobe.py:159", "DL301", D, "", "same, val sampler evaluated every epoch (:285)"),
    # --- facebookresearch/dino
    ("facebookresearch+dino", "eval_copy_detection.py:160", "DL201", F, "S2",
     "fresh loader per call, one pass through MetricLogger().log_every(data_loader, 10) (:164)"),
    ("facebookresearch+dino", "eval_copy_detection.py:223", "DL202", F, "T", "--num_workers 10 'per GPU'"),
    ("facebookresearch+dino", "eval_image_retrieval.py:94", "DL202", F, "T", "--num_workers 10 'per GPU'"),
    ("facebookresearch+dino", "eval_image_retrieval.py:113", "DL201", F, "S2",
     "passed once to eval_knn.extract_features (other file), one pass through log_every (:165)"),
    ("facebookresearch+dino", "eval_image_retrieval.py:121", "DL201", F, "S2", "same, query loader (:166)"),
    ("facebookresearch+dino", "eval_knn.py:41", "DL201", F, "S2",
     "passed once to same-file extract_features, one pass through log_every (:76, :99)"),
    ("facebookresearch+dino", "eval_knn.py:49", "DL201", F, "S2", "same, val loader (:78)"),
    ("facebookresearch+dino", "eval_knn.py:209", "DL202", F, "T", "--num_workers 10 'per GPU'"),
    ("facebookresearch+dino", "eval_linear.py:72", "DL201", T, "", "validate_network every val_freq epochs (:132)"),
    ("facebookresearch+dino", "eval_linear.py:93", "DL201", T, "", "train() per epoch (:126)"),
    ("facebookresearch+dino", "eval_linear.py:275", "DL202", F, "T", "--num_workers 10 'per GPU'"),
    ("facebookresearch+dino", "main_dino.py:125", "DL202", F, "T", "--num_workers 10 'per GPU'"),
    ("facebookresearch+dino", "main_dino.py:147", "DL201", T, "", "train_one_epoch per epoch (:273)"),
    # --- facebookresearch/ConvNeXt
    ("facebookresearch+ConvNeXt", "main.py:179", "DL202", F, "T", "--num_workers 10 per GPU (DDP)"),
    ("facebookresearch+ConvNeXt", "main.py:250", "DL201", T, "", "train loader per epoch (:403)"),
    ("facebookresearch+ConvNeXt", "main.py:259", "DL201", T, "", "val loader every epoch (:416)"),
    # --- facebookresearch/deit
    ("facebookresearch+deit", "main.py:176", "DL202", F, "T", "--num_workers 10 per GPU (DDP)"),
    ("facebookresearch+deit", "main.py:236", "DL201", T, "", "train loader per epoch (:425)"),
    ("facebookresearch+deit", "main.py:246", "DL201", T, "", "val loader every epoch (:447)"),
    # --- facebookresearch/moco
    ("facebookresearch+moco", "main_lincls.py:51", "DL202", F, "N1",
     "default 32 is per node: args.workers is divided by ngpus_per_node before use (:283)"),
    ("facebookresearch+moco", "main_lincls.py:367", "DL201", T, "", "train() per epoch (:405)"),
    ("facebookresearch+moco", "main_lincls.py:376", "DL201", T, "", "validate() every epoch (:408)"),
    ("facebookresearch+moco", "main_moco.py:55", "DL202", F, "N1", "same per-node default, divided at :271"),
    ("facebookresearch+moco", "main_moco.py:368", "DL201", T, "", "train() per epoch (:384)"),
    # --- sthalles/SimCLR
    ("sthalles+SimCLR", "feature_eval/mini_batch_logistic_regression_evaluator.ipynb:11", "DL201", T, "",
     "test_loader (num_workers=10) iterated in the 100-epoch loop of a later cell"),
    ("sthalles+SimCLR", "feature_eval/mini_batch_logistic_regression_evaluator.ipynb:12", "DL202", F, "T",
     "10 workers, at or under the 16 of issue 10"),
    ("sthalles+SimCLR", "feature_eval/mini_batch_logistic_regression_evaluator.ipynb:25", "DL201", T, "",
     "same, CIFAR-10 variant"),
    ("sthalles+SimCLR", "feature_eval/mini_batch_logistic_regression_evaluator.ipynb:26", "DL202", F, "T",
     "10 workers"),
    ("sthalles+SimCLR", "run.py:23", "DL202", F, "T", "--workers 12 for one GPU"),
    *(
        ("sthalles+SimCLR", f"feature_eval/mini_batch_logistic_regression_evaluator.ipynb:{line}", "DL206", T, "",
         "the 100-epoch loop of cell 16 moves x_batch/y_batch .to(device), device = 'cuda' if available (cell 6); "
         "no pin_memory")
        for line in (5, 11, 19, 25)
    ),
    ("sthalles+SimCLR", "run.py:71", "DL201", T, "", "SimCLR.train iterates it every epoch (simclr.py:68-69)"),
    # --- karpathy/minGPT
    ("karpathy+minGPT", "mingpt/trainer.py:68", "DL201", F, "S3",
     "RandomSampler(replacement=True, num_samples=int(1e10)); iter() re-created only on StopIteration (:85-87)"),
    # --- pytorch/examples
    ("pytorch+examples", "dcgan/main.py:107", "DL201", T, "", "module-level epoch loop (:222-223)"),
    ("pytorch+examples", "dcgan/main.py:222", "DL101", T, "", "module-level loop over a 2-worker loader"),
    ("pytorch+examples", "distributed/minGPT-ddp/mingpt/trainer.py:74", "DL201", T, "",
     "stored as self.train_loader, _run_epoch per epoch (:149)"),
    ("pytorch+examples", "imagenet/main.py:269", "DL201", T, "", "train() per epoch (:286)"),
    ("pytorch+examples", "imagenet/main.py:273", "DL201", T, "", "validate() every epoch (:289)"),
    ("pytorch+examples", "mnist_forward_forward/main.py:153", "DL102", T, "",
     "transforms.Lambda(lambda ...) in the dataset; num_workers=1 on accelerators via a kwargs splat (:145)"),
    ("pytorch+examples", "super_resolution/main.py:37", "DL201", T, "", "train(epoch) in the module-level loop (:81)"),
    ("pytorch+examples", "super_resolution/main.py:38", "DL201", T, "", "test() every epoch"),
    ("pytorch+examples", "super_resolution/main.py:81", "DL101", T, "", "module-level epoch loop, --threads 4"),
    # --- ultralytics/yolov5
    ("ultralytics+yolov5", "utils/dataloaders.py:1000", "DL201", F, "S3",
     "InfiniteDataLoader keeps one iterator over a _RepeatSampler for its lifetime (same file)"),
    # --- openai/improved-diffusion
    ("openai+improved-diffusion", "improved_diffusion/image_datasets.py:45", "DL201", T, "",
     "`while True: yield from loader` re-iterates the loader: each pass restarts the worker"),
    ("openai+improved-diffusion", "improved_diffusion/image_datasets.py:49", "DL201", T, "", "same, shuffled arm"),
    # --- lucidrains/denoising-diffusion-pytorch
    ("lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch/denoising_diffusion_pytorch.py:955",
     "DL201", T, "", "cycle(dl) is `while True: for data in dl` (:60-63): workers restart every pass"),
    ("lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch/denoising_diffusion_pytorch.py:955",
     "DL202", T, "", "num_workers=cpu_count()"),
    ("lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch/denoising_diffusion_pytorch_1d.py:818",
     "DL201", T, "", "same cycle(dl)"),
    ("lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch/denoising_diffusion_pytorch_1d.py:818",
     "DL202", T, "", "num_workers=cpu_count()"),
    ("lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch/guided_diffusion.py:853",
     "DL201", T, "", "same cycle(dl)"),
    ("lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch/guided_diffusion.py:853",
     "DL202", T, "", "num_workers=cpu_count()"),
    ("lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch/repaint.py:990",
     "DL201", T, "", "same cycle(dl)"),
    ("lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch/repaint.py:990",
     "DL202", T, "", "num_workers=cpu_count()"),
    # --- CompVis/stable-diffusion
    ("CompVis+stable-diffusion", "main.py:203", "DL201", T, "", "bound as train_dataloader hook (:173): every epoch"),
    ("CompVis+stable-diffusion", "main.py:212", "DL201", T, "", "bound as val_dataloader hook (:176): every epoch"),
    ("CompVis+stable-diffusion", "main.py:228", "DL201", F, "S5",
     "_test_dataloader bound as the test_dataloader hook in __init__ (:179): trainer.test runs it once"),
    ("CompVis+stable-diffusion", "main.py:236", "DL201", F, "S5", "_predict_dataloader, bound as predict hook (:182)"),
    # --- mlfoundations/open_clip
    ("mlfoundations+open_clip", "scripts/genlip_attentive_probe.py:119", "DL201", F, "S4",
     "build_loader returns it; each caller's loader is iterated once by cache_features (:244, :247)"),
    ("mlfoundations+open_clip", "scripts/genlip_zeroshot.py:196", "DL206", T, "",
     "batch fields .to(device, non_blocking=True) (:205-207), no pin_memory"),
    ("mlfoundations+open_clip", "src/open_clip_train/data.py:253", "DL206", T, "",
     "the imagenet-val loader (no pin_memory) reaches zero_shot.run_zero_shot_classifier every epoch, whose "
     "loop copies the batch: target.to(device, non_blocking=True), images through _move_to_device (:111-113)"),
    ("mlfoundations+open_clip", "src/open_clip_train/data.py:253", "DL201", T, "",
     "ImageNet zero-shot loader kept in DataInfo, evaluated every zeroshot_frequency epochs"),
    ("mlfoundations+open_clip", "src/open_clip_train/data.py:1040", "DL201", T, "",
     "CSV train/val loader in DataInfo, iterated every epoch by train_one_epoch/evaluate"),
    ("mlfoundations+open_clip", "src/open_clip_train/data.py:1106", "DL201", T, "", "synthetic data, same"),
    # --- jaywalnut310/vits
    ("jaywalnut310+vits", "train.py:75", "DL201", T, "", "train_and_evaluate per epoch (:117, :137)"),
    ("jaywalnut310+vits", "train.py:79", "DL201", T, "", "evaluate() every eval_interval steps restarts 8 workers (:224)"),
    ("jaywalnut310+vits", "train_ms.py:75", "DL201", T, "", "same as train.py"),
    ("jaywalnut310+vits", "train_ms.py:79", "DL201", T, "", "same as train.py"),
    # --- huggingface/accelerate
    ("huggingface+accelerate", "examples/complete_cv_example.py:151", "DL201", T, "", "epoch loop (:212)"),
    ("huggingface+accelerate", "examples/complete_cv_example.py:152", "DL201", T, "", "eval every epoch"),
    ("huggingface+accelerate", "examples/cv_example.py:115", "DL201", T, "", "epoch loop"),
    ("huggingface+accelerate", "examples/cv_example.py:116", "DL201", T, "", "eval every epoch"),
    ("huggingface+accelerate", "src/accelerate/test_utils/scripts/test_distributed_data_loop.py:406", "DL201", F, "S1",
     "`loader` bound four times, each passed once to test_data_loader (one pass after accelerator.prepare, :262-265)"),
    ("huggingface+accelerate", "src/accelerate/test_utils/scripts/test_distributed_data_loop.py:410", "DL201", F, "S1",
     "same"),
    ("huggingface+accelerate", "src/accelerate/test_utils/scripts/test_distributed_data_loop.py:415", "DL201", F, "S1",
     "same"),
    ("huggingface+accelerate", "src/accelerate/test_utils/scripts/test_distributed_data_loop.py:420", "DL201", F, "S1",
     "same"),
    ("huggingface+accelerate", "tests/test_accelerator.py:104", "DL201", D, "",
     "test factory; one test iterates the prepared loader twice (save/resume), tiny TensorDataset"),
    ("huggingface+accelerate", "tests/test_accelerator.py:105", "DL201", D, "", "same"),
    ("huggingface+accelerate", "tests/test_state_checkpointing.py:54", "DL201", T, "",
     "train(num_epochs=...) iterates it per epoch (:65-70), 4 workers"),
    ("huggingface+accelerate", "tests/test_state_checkpointing.py:55", "DL201", F, "N11",
     "re-judged: the valid loader is only passed to prepare() (:113-116) and never iterated"),
    *(
        ("huggingface+accelerate", f"benchmarks/fp8/{kind}/fp8_utils.py:51", "DL206", D, "",
         "train loader returned through accelerator.prepare (:89), which moves batches itself (from pageable "
         "memory, as claimed); the script's own batch.to('cuda') is then a no-op (as amused's)")
        for kind in ("ms_amp", "transformer_engine")
    ),
    # --- facebookresearch/detectron2
    ("facebookresearch+detectron2", "configs/Misc/torchvision_imagenet_R_50.py:40", "DL201", D, "S3",
     "train: TrainingSampler never ends (one pass); test: InferenceSampler, re-run by the eval hook"),
    ("facebookresearch+detectron2", "detectron2/data/build.py:675", "DL201", F, "S4",
     "build_detection_test_loader: callers build one per evaluation and iterate it once"),
    ("facebookresearch+detectron2", "projects/DensePose/densepose/data/build.py:663", "DL201", F, "S3",
     "sampler is detectron2's TrainingSampler (endless, other file)"),
    ("facebookresearch+detectron2", "tests/data/test_sampler.py:52", "DL201", F, "S1",
     "data_loader bound twice (0 then 2 workers), each islice'd once"),
    # --- facebookresearch/fairseq
    ("facebookresearch+fairseq", "examples/MMPT/mmpt/tasks/retritask.py:63", "DL201", T, "",
     "stored as self.retri_dataloader, retrive_candidates(epoch) every epoch (fairseqmmtask.py:76-78)"),
    ("facebookresearch+fairseq", "examples/MMPT/mmpt_cli/predict.py:43", "DL201", T, "",
     "one loader evaluated for every checkpoint (predict.py:74-78), 6 workers"),
    ("facebookresearch+fairseq", "examples/MMPT/scripts/text_token_extractor/pretokenization.py:82", "DL103", T, "",
     "nested collator sent to 16 workers"),
    ("facebookresearch+fairseq", "examples/MMPT/scripts/text_token_extractor/pretokenization.py:82", "DL202", F, "T",
     "16 workers, at the threshold of issue 10"),
    ("facebookresearch+fairseq", "examples/MMPT/scripts/video_feature_extractor/extract.py:95", "DL206", F, "S6",
     "video = preprocess(data['video'].squeeze()); video[a:b:f].cuda() copies a computed tensor (:110-129)"),
    ("facebookresearch+fairseq", "examples/MMPT/scripts/video_feature_extractor/extract.py:105", "DL101", T, "",
     "module-level loop over a 4-worker loader"),
    ("facebookresearch+fairseq", "examples/wav2vec/vq-wav2vec_featurize.py:207", "DL201", F, "S4",
     "load_data returns a fresh loader per split, iterated once by iterate() (:135-136)"),
    # --- kuangliu/pytorch-cifar
    ("kuangliu+pytorch-cifar", "main.py:44", "DL201", T, "", "train(epoch) in the module-level 200-epoch loop"),
    ("kuangliu+pytorch-cifar", "main.py:44", "DL206", T, "", "inputs.to(device), device = 'cuda' if available"),
    ("kuangliu+pytorch-cifar", "main.py:49", "DL201", T, "", "test(epoch) every epoch"),
    ("kuangliu+pytorch-cifar", "main.py:49", "DL206", T, "", "same copies in test()"),
    ("kuangliu+pytorch-cifar", "main.py:151", "DL101", T, "", "module-level epoch loop, 2 workers"),
    # --- huggingface/diffusers (examples/)
    *(
        ("huggingface+diffusers", f"examples/{path}", "DL206", T, "",
         "latent-caching pass copies batch['pixel_values'] with non_blocking=True before accelerator.prepare")
        for path in (
            "advanced_diffusion_training/train_dreambooth_lora_flux_advanced.py:1861",
            "advanced_diffusion_training/train_dreambooth_lora_sd15_advanced.py:1536",
            "advanced_diffusion_training/train_dreambooth_lora_sdxl_advanced.py:1870",
            "dreambooth/train_dreambooth_lora_flux.py:1482",
            "dreambooth/train_dreambooth_lora_flux2.py:1651",
            "dreambooth/train_dreambooth_lora_flux2_img2img.py:1475",
            "dreambooth/train_dreambooth_lora_flux2_klein.py:1611",
            "dreambooth/train_dreambooth_lora_flux2_klein_img2img.py:1469",
            "dreambooth/train_dreambooth_lora_flux_kontext.py:1727",
            "dreambooth/train_dreambooth_lora_hidream.py:1338",
            "dreambooth/train_dreambooth_lora_ideogram4.py:1654",
            "dreambooth/train_dreambooth_lora_krea2.py:1642",
            "dreambooth/train_dreambooth_lora_lumina2.py:1190",
            "dreambooth/train_dreambooth_lora_qwen_image.py:1542",
            "dreambooth/train_dreambooth_lora_sana.py:1213",
            "dreambooth/train_dreambooth_lora_sd3.py:1522",
            "dreambooth/train_dreambooth_lora_z_image.py:1510",
            "research_projects/flux_lora_quantization/train_dreambooth_lora_flux_miniature.py:908",
        )
    ),
    ("huggingface+diffusers", "examples/amused/train_amused.py:656", "DL206", D, "",
     "the loop iterates the accelerate-prepared loader (:679, :757): accelerate makes the copy, from pageable memory"),
    ("huggingface+diffusers", "examples/vqgan/train_vqgan.py:809", "DL206", T, "",
     "loader not prepared (:833); .to(device, non_blocking=True) in the loop (:900)"),
    ("huggingface+diffusers", "examples/research_projects/colossalai/train_dreambooth_colossalai.py:510", "DL206", T, "",
     "every batch field .to(device, non_blocking=True) (:569)"),
    ("huggingface+diffusers", "examples/research_projects/colossalai/train_dreambooth_colossalai.py:510", "DL201", T, "",
     "epoch loop (:563)"),
    ("huggingface+diffusers", "examples/research_projects/colossalai/train_dreambooth_colossalai.py:511", "DL103", T, "",
     "nested collate_fn, num_workers=1"),
    ("huggingface+diffusers", "examples/cosmos/train_cosmos_predict25_lora.py:421", "DL201", T, "",
     "build_dataloader's loader prepared and iterated per epoch (:568, :630)"),
    ("huggingface+diffusers", "examples/custom_diffusion/train_custom_diffusion.py:1037", "DL201", T, "",
     "epoch loop (:1136)"),
    ("huggingface+diffusers", "examples/custom_diffusion/train_custom_diffusion.py:1041", "DL102", T, "",
     "collate_fn=lambda with num_workers=args.dataloader_num_workers"),
    ("huggingface+diffusers", "examples/research_projects/autoencoder_rae/train_autoencoder_rae.py:249", "DL201", T, "",
     "epoch loop (:333)"),
    ("huggingface+diffusers", "examples/research_projects/autoencoder_rae/train_autoencoder_rae.py:252", "DL103", T, "",
     "nested collate_fn with num_workers=args.dataloader_num_workers"),
    ("huggingface+diffusers", "examples/research_projects/dreambooth_inpaint/train_dreambooth_inpaint.py:448", "DL201",
     F, "S4", "class-image sample_dataloader, prepared and iterated once (:451, :455)"),
    ("huggingface+diffusers", "examples/research_projects/dreambooth_inpaint/train_dreambooth_inpaint_lora.py:447",
     "DL201", F, "S4", "same"),
    ("huggingface+diffusers", "examples/research_projects/multi_subject_dreambooth/train_multi_subject_dreambooth.py:965",
     "DL201", T, "", "epoch loop (:1067)"),
    ("huggingface+diffusers", "examples/research_projects/multi_subject_dreambooth/train_multi_subject_dreambooth.py:969",
     "DL102", T, "", "collate_fn=lambda, num_workers=1"),
    ("huggingface+diffusers", "examples/research_projects/pytorch_xla/training/text_to_image/train_text_to_image_xla.py:607",
     "DL002", T, "", "defaults --dataloader_num_workers 0 and --loader_prefetch_factor 2: ValueError"),
    ("huggingface+diffusers", "examples/research_projects/realfill/train_realfill.py:733", "DL201", T, "",
     "epoch loop (:835)"),
    ("huggingface+diffusers", "examples/research_projects/sana/train_sana_sprint_diffusers.py:1239", "DL001", T, "",
     "persistent_workers=True with --dataloader_num_workers default 0: ValueError"),
    ("huggingface+diffusers", "examples/t2i_adapter/train_t2i_adapter_sdxl.py:1074", "DL201", T, "", "epoch loop (:1172)"),
    # --- Lightning-AI/pytorch-lightning (examples/)
    ("Lightning-AI+pytorch-lightning", "examples/fabric/build_your_own_trainer/run.py:64", "DL201", T, "",
     "MyCustomTrainer.fit (trainer.py) runs train_loader every epoch"),
    ("Lightning-AI+pytorch-lightning", "examples/fabric/build_your_own_trainer/run.py:67", "DL201", T, "",
     "val_loop every epoch"),
    ("Lightning-AI+pytorch-lightning", "examples/fabric/dcgan/train_fabric.py:26", "DL202", T, "", "workers = os.cpu_count()"),
    ("Lightning-AI+pytorch-lightning", "examples/fabric/dcgan/train_fabric.py:69", "DL201", T, "", "epoch loop (:120)"),
    ("Lightning-AI+pytorch-lightning", "examples/fabric/dcgan/train_torch.py:25", "DL202", T, "", "workers = os.cpu_count()"),
    ("Lightning-AI+pytorch-lightning", "examples/fabric/dcgan/train_torch.py:68", "DL201", T, "", "epoch loop (:131)"),
    ("Lightning-AI+pytorch-lightning", "examples/fabric/fp8_distributed_transformer/train.py:46", "DL201", F, "N3",
     "one pass of at most 100 steps; rebound by fabric.setup_dataloaders (:67), iterated in two arms of one conditional (:69)"),
    ("Lightning-AI+pytorch-lightning", "examples/pytorch/domain_templates/computer_vision_fine_tuning.py:143", "DL201",
     T, "", "shared by train_dataloader/val_dataloader hooks"),
    ("Lightning-AI+pytorch-lightning", "examples/pytorch/domain_templates/imagenet.py:160", "DL201", T, "",
     "train_dataloader hook"),
    ("Lightning-AI+pytorch-lightning", "examples/pytorch/domain_templates/imagenet.py:169", "DL201", T, "",
     "val_dataloader hook (test_dataloader reuses it once)"),
    ("Lightning-AI+pytorch-lightning", "examples/pytorch/fp8_distributed_transformer/train.py:67", "DL201", D, "",
     "trainer.fit re-iterates per epoch, but max_steps=100 ends inside the first epoch"),
    ("Lightning-AI+pytorch-lightning", "examples/pytorch/tensor_parallel/train.py:46", "DL201", F, "N4",
     "train_dataloader hook, but the file's only Trainer has max_epochs=1 (:59-64)"),
    # --- microsoft/Swin-Transformer (built in data/, iterated in main*.py)
    ("microsoft+Swin-Transformer", "data/build.py:69", "DL201", T, "",
     "build_loader's train loader, train_one_epoch per epoch in main.py:158"),
    ("microsoft+Swin-Transformer", "data/build.py:77", "DL201", T, "", "val loader, validate() every epoch (main.py:164)"),
    ("microsoft+Swin-Transformer", "data/data_simmim_ft.py:33", "DL201", T, "",
     "train loader, per epoch in main_simmim_ft.py:141"),
    ("microsoft+Swin-Transformer", "data/data_simmim_ft.py:41", "DL201", T, "", "val loader every epoch"),
    ("microsoft+Swin-Transformer", "data/data_simmim_pt.py:97", "DL201", T, "", "pretraining loader, per epoch"),
    # --- huggingface/pytorch-image-models (top-level scripts + timm/data)
    ("huggingface+pytorch-image-models", "timm/data/naflex_loader.py:437", "DL201", T, "",
     "the NaFlex eval loader omits the persistent_workers its train twin gets; train.py validates every epoch (:1150)"),
    # --- facebookresearch/barlowtwins
    ("facebookresearch+barlowtwins", "evaluate.py:148", "DL201", T, "", "epoch loop (:152, :161)"),
    ("facebookresearch+barlowtwins", "evaluate.py:149", "DL201", T, "", "val loader every epoch (:185)"),
    ("facebookresearch+barlowtwins", "main.py:117", "DL201", T, "", "epoch loop (:123)"),
    # --- k2-fsa/icefall: every recipe keeps its own copy of a lhotse data module
    ("k2-fsa+icefall", "egs/multi_conv_zh_es_ta/ST/zipformer_multijoiner_st/train.py:1611", "DL000", T, "",
     "`c.duration =< 0.1` is a syntax error in the file itself"),
    *(
        ("k2-fsa+icefall", where, "DL201", D, "Q1",
         "train loader, iterated every epoch by train.py, with an explicit persistent_workers=False")
        for where in (
            "egs/aidatatang_200zh/ASR/pruned_transducer_stateless2/asr_datamodule.py:309",
            "egs/aishell/ASR/tdnn_lstm_ctc/asr_datamodule.py:294",
            "egs/aishell/ASR/transducer_stateless_modified-2/asr_datamodule.py:239",
            "egs/aishell2/ASR/pruned_transducer_stateless5/asr_datamodule.py:320",
            "egs/aishell4/ASR/pruned_transducer_stateless5/asr_datamodule.py:327",
            "egs/alimeeting/ASR/pruned_transducer_stateless2/asr_datamodule.py:309",
            "egs/alimeeting/ASR_v2/pruned_transducer_stateless7/asr_datamodule.py:281",
            "egs/ami/ASR/pruned_transducer_stateless7/asr_datamodule.py:287",
            "egs/ami/SURT/dprnn_zipformer/asr_datamodule.py:280",
            "egs/audioset/AT/zipformer/at_datamodule.py:356",
            "egs/commonvoice/ASR/pruned_transducer_stateless7/asr_datamodule.py:333",
            "egs/csj/ASR/local/utils/asr_datamodule.py:361",
            "egs/gigaspeech/ASR/conformer_ctc/asr_datamodule.py:277",
            "egs/gigaspeech/ASR/pruned_transducer_stateless2/asr_datamodule.py:318",
            "egs/gigaspeech/ASR/zipformer/asr_datamodule.py:341",
            "egs/grid/VSR/conformer_ctc2/asr_datamodule.py:262",
            "egs/iwslt22_ta/ASR/pruned_transducer_stateless5/asr_datamodule.py:311",
            "egs/iwslt22_ta/ASR/zipformer/asr_datamodule.py:311",
            "egs/iwslt22_ta/ST/pruned_transducer_stateless5/asr_datamodule.py:311",
            "egs/iwslt22_ta/ST/zipformer/asr_datamodule.py:309",
            "egs/ksponspeech/ASR/pruned_transducer_stateless7_streaming/asr_datamodule.py:319",
            "egs/libricss/SURT/dprnn_zipformer/asr_datamodule.py:282",
            "egs/libriheavy/ASR/zipformer/asr_datamodule.py:335",
            "egs/libriheavy/ASR/zipformer_prompt_asr/asr_datamodule.py:363",
            "egs/librilight/SSL/zipformer/ssl_datamodule.py:187",
            "egs/librispeech/ASR/pruned2_knowledge/asr_datamodule.py:312",
            "egs/librispeech/ASR/pruned_transducer_stateless3/asr_datamodule.py:232",
            "egs/librispeech/ASR/pruned_transducer_stateless7/gigaspeech.py:319",
            "egs/librispeech/ASR/tdnn_lstm_ctc/asr_datamodule.py:335",
            "egs/librispeech/ASR/tiny_transducer_ctc/asr_datamodule.py:329",
            "egs/librispeech/SSL/hubert/asr_datamodule.py:173",
            "egs/librispeech/SSL/hubert/ssl_datamodule.py:193",
            "egs/librispeech/WSASR/conformer_ctc2/asr_datamodule.py:252",
            "egs/libritts/ASR/zipformer/asr_datamodule.py:330",
            "egs/libritts/TTS/vits/tts_datamodule.py:238",
            "egs/ljspeech/TTS/vits/tts_datamodule.py:221",
            "egs/mdcc/ASR/zipformer/asr_datamodule.py:296",
            "egs/mgb2/ASR/conformer_ctc/asr_datamodule.py:290",
            "egs/multi_conv_zh_es_ta/ST/zipformer_multijoiner_st/asr_datamodule.py:322",
            "egs/multi_ja_en/ASR/local/utils/asr_datamodule.py:268",
            "egs/reazonspeech/ASR/local/utils/asr_datamodule.py:279",
            "egs/spgispeech/ASR/pruned_transducer_stateless2/asr_datamodule.py:270",
            "egs/swbd/ASR/conformer_ctc/asr_datamodule.py:323",
            "egs/tal_csasr/ASR/pruned_transducer_stateless5/asr_datamodule.py:328",
            "egs/tedlium3/ASR/transducer_stateless/asr_datamodule.py:276",
            "egs/timit/ASR/tdnn_lstm_ctc/asr_datamodule.py:238",
            "egs/vctk/TTS/vits/tts_datamodule.py:230",
            "egs/wenetspeech/ASR/pruned_transducer_stateless2/asr_datamodule.py:312",
            "egs/wenetspeech/KWS/zipformer/asr_datamodule.py:313",
            "egs/wenetspeech4tts/TTS/valle/tts_datamodule.py:237",
            "egs/xbmu_amdo31/ASR/pruned_transducer_stateless5/asr_datamodule.py:321",
        )
    ),
    *(
        ("k2-fsa+icefall", where, "DL201", D, "Q1",
         "validation loader, re-run every valid_interval batches, with an explicit persistent_workers=False")
        for where in (
            "egs/aidatatang_200zh/ASR/pruned_transducer_stateless2/asr_datamodule.py:358",
            "egs/aishell/ASR/tdnn_lstm_ctc/asr_datamodule.py:331",
            "egs/aishell/ASR/transducer_stateless_modified-2/asr_datamodule.py:269",
            "egs/aishell2/ASR/pruned_transducer_stateless5/asr_datamodule.py:358",
            "egs/aishell4/ASR/pruned_transducer_stateless5/asr_datamodule.py:371",
            "egs/alimeeting/ASR/pruned_transducer_stateless2/asr_datamodule.py:358",
            "egs/alimeeting/ASR_v2/pruned_transducer_stateless7/asr_datamodule.py:317",
            "egs/ami/ASR/pruned_transducer_stateless7/asr_datamodule.py:324",
            "egs/ami/SURT/dprnn_zipformer/asr_datamodule.py:320",
            "egs/audioset/AT/zipformer/at_datamodule.py:394",
            "egs/commonvoice/ASR/pruned_transducer_stateless7/asr_datamodule.py:371",
            "egs/csj/ASR/local/utils/asr_datamodule.py:401",
            "egs/gigaspeech/ASR/conformer_ctc/asr_datamodule.py:314",
            "egs/gigaspeech/ASR/pruned_transducer_stateless2/asr_datamodule.py:356",
            "egs/gigaspeech/ASR/zipformer/asr_datamodule.py:388",
            "egs/grid/VSR/conformer_ctc2/asr_datamodule.py:296",
            "egs/iwslt22_ta/ASR/pruned_transducer_stateless5/asr_datamodule.py:350",
            "egs/iwslt22_ta/ASR/zipformer/asr_datamodule.py:350",
            "egs/iwslt22_ta/ST/pruned_transducer_stateless5/asr_datamodule.py:350",
            "egs/iwslt22_ta/ST/zipformer/asr_datamodule.py:348",
            "egs/ksponspeech/ASR/pruned_transducer_stateless7_streaming/asr_datamodule.py:357",
            "egs/libricss/SURT/dprnn_zipformer/asr_datamodule.py:315",
            "egs/libriheavy/ASR/zipformer/asr_datamodule.py:373",
            "egs/libriheavy/ASR/zipformer_prompt_asr/asr_datamodule.py:415",
            "egs/librilight/SSL/zipformer/ssl_datamodule.py:223",
            "egs/librispeech/ASR/pruned2_knowledge/asr_datamodule.py:350",
            "egs/librispeech/ASR/pruned_transducer_stateless3/asr_datamodule.py:266",
            "egs/librispeech/ASR/pruned_transducer_stateless7/gigaspeech.py:357",
            "egs/librispeech/ASR/tdnn_lstm_ctc/asr_datamodule.py:373",
            "egs/librispeech/ASR/tiny_transducer_ctc/asr_datamodule.py:367",
            "egs/librispeech/SSL/hubert/asr_datamodule.py:193",
            "egs/librispeech/SSL/hubert/ssl_datamodule.py:231",
            "egs/librispeech/WSASR/conformer_ctc2/asr_datamodule.py:286",
            "egs/libritts/ASR/zipformer/asr_datamodule.py:368",
            "egs/ljspeech/TTS/vits/tts_datamodule.py:262",
            "egs/mdcc/ASR/zipformer/asr_datamodule.py:333",
            "egs/mgb2/ASR/conformer_ctc/asr_datamodule.py:328",
            "egs/multi_conv_zh_es_ta/ST/zipformer_multijoiner_st/asr_datamodule.py:360",
            "egs/multi_ja_en/ASR/local/utils/asr_datamodule.py:305",
            "egs/multi_zh-hans/ASR/zipformer/asr_datamodule.py:360",
            "egs/multi_zh_en/ASR/zipformer/asr_datamodule.py:357",
            "egs/reazonspeech/ASR/local/utils/asr_datamodule.py:316",
            "egs/spgispeech/ASR/pruned_transducer_stateless2/asr_datamodule.py:308",
            "egs/swbd/ASR/conformer_ctc/asr_datamodule.py:361",
            "egs/tal_csasr/ASR/pruned_transducer_stateless5/asr_datamodule.py:372",
            "egs/tedlium3/ASR/transducer_stateless/asr_datamodule.py:315",
            "egs/timit/ASR/tdnn_lstm_ctc/asr_datamodule.py:278",
            "egs/vctk/TTS/vits/tts_datamodule.py:272",
            "egs/wenetspeech/ASR/pruned_transducer_stateless2/asr_datamodule.py:356",
            "egs/wenetspeech/KWS/zipformer/asr_datamodule.py:357",
            "egs/xbmu_amdo31/ASR/pruned_transducer_stateless5/asr_datamodule.py:359",
            "egs/libritts/TTS/vits/tts_datamodule.py:280",
            "egs/wenetspeech4tts/TTS/valle/tts_datamodule.py:266",
        )
    ),
    # Re-judged after the containers fix silenced decode.py's one pass per test set: these recipes'
    # train.py also builds its validation loader with test_dataloaders() (no persistent_workers at all)
    # and compute_validation_loss iterates it every valid_interval batches of every epoch.
    *(
        ("k2-fsa+icefall", where, "DL201", T, "",
         f"train.py:{line} builds the validation loader with test_dataloaders(); train_one_epoch -> "
         "compute_validation_loss re-iterates it every valid_interval batches, every epoch")
        for where, line in (
            ("egs/iwslt22_ta/ASR/pruned_transducer_stateless5/asr_datamodule.py:373", 1134),
            ("egs/iwslt22_ta/ASR/zipformer/asr_datamodule.py:373", 1258),
            ("egs/iwslt22_ta/ST/pruned_transducer_stateless5/asr_datamodule.py:373", 1124),
            ("egs/iwslt22_ta/ST/zipformer/asr_datamodule.py:371", 1251),
            ("egs/mgb2/ASR/conformer_ctc/asr_datamodule.py:350", 660),
        )
    ),
    *(
        ("k2-fsa+icefall", where, "DL201", F, "S4",
         "test_dataloaders: decode.py builds one loader per test set and iterates each once (zip(test_sets, test_dls))")
        for where in (
            "egs/aidatatang_200zh/ASR/pruned_transducer_stateless2/asr_datamodule.py:386",
            "egs/aishell/ASR/tdnn_lstm_ctc/asr_datamodule.py:354",
            "egs/aishell/ASR/transducer_stateless_modified-2/asr_datamodule.py:293",
            "egs/aishell2/ASR/pruned_transducer_stateless5/asr_datamodule.py:382",
            "egs/aishell4/ASR/pruned_transducer_stateless5/asr_datamodule.py:397",
            "egs/alimeeting/ASR/pruned_transducer_stateless2/asr_datamodule.py:386",
            "egs/alimeeting/ASR_v2/pruned_transducer_stateless7/asr_datamodule.py:341",
            "egs/ami/ASR/pruned_transducer_stateless7/asr_datamodule.py:346",
            "egs/ami/SURT/dprnn_zipformer/asr_datamodule.py:356",
            "egs/audioset/AT/zipformer/at_datamodule.py:418",
            "egs/baker_zh/TTS/matcha/tts_datamodule.py:313",
            "egs/commonvoice/ASR/pruned_transducer_stateless7/asr_datamodule.py:397",
            "egs/csj/ASR/local/utils/asr_datamodule.py:428",
            "egs/gigaspeech/ASR/conformer_ctc/asr_datamodule.py:338",
            "egs/gigaspeech/ASR/pruned_transducer_stateless2/asr_datamodule.py:380",
            "egs/gigaspeech/ASR/zipformer/asr_datamodule.py:412",
            "egs/grid/VSR/conformer_ctc2/asr_datamodule.py:319",
            "egs/ksponspeech/ASR/pruned_transducer_stateless7_streaming/asr_datamodule.py:381",
            "egs/libricss/SURT/dprnn_zipformer/asr_datamodule.py:344",
            "egs/libriheavy/ASR/zipformer/asr_datamodule.py:397",
            "egs/libriheavy/ASR/zipformer_prompt_asr/asr_datamodule.py:441",
            "egs/librilight/SSL/zipformer/ssl_datamodule.py:258",
            "egs/librispeech/ASR/pruned2_knowledge/asr_datamodule.py:372",
            "egs/librispeech/ASR/pruned_transducer_stateless3/asr_datamodule.py:293",
            "egs/librispeech/ASR/pruned_transducer_stateless7/gigaspeech.py:381",
            "egs/librispeech/ASR/tdnn_lstm_ctc/asr_datamodule.py:397",
            "egs/librispeech/ASR/tiny_transducer_ctc/asr_datamodule.py:391",
            "egs/librispeech/SSL/hubert/asr_datamodule.py:212",
            "egs/librispeech/SSL/hubert/ssl_datamodule.py:266",
            "egs/librispeech/WSASR/conformer_ctc2/asr_datamodule.py:308",
            "egs/libritts/ASR/zipformer/asr_datamodule.py:394",
            "egs/libritts/CODEC/encodec/codec_datamodule.py:271",
            "egs/libritts/TTS/vits/tts_datamodule.py:321",
            "egs/ljspeech/TTS/matcha/tts_datamodule.py:313",
            "egs/ljspeech/TTS/vits/tts_datamodule.py:302",
            "egs/mdcc/ASR/zipformer/asr_datamodule.py:358",
            "egs/multi_conv_zh_es_ta/ST/zipformer_multijoiner_st/asr_datamodule.py:384",
            "egs/multi_ja_en/ASR/local/utils/asr_datamodule.py:328",
            "egs/multi_zh-hans/ASR/zipformer/asr_datamodule.py:384",
            "egs/multi_zh_en/ASR/zipformer/asr_datamodule.py:381",
            "egs/reazonspeech/ASR/local/utils/asr_datamodule.py:339",
            "egs/speechio/ASR/whisper/asr_datamodule.py:189",
            "egs/spgispeech/ASR/pruned_transducer_stateless2/asr_datamodule.py:330",
            "egs/swbd/ASR/conformer_ctc/asr_datamodule.py:385",
            "egs/tal_csasr/ASR/pruned_transducer_stateless5/asr_datamodule.py:398",
            "egs/tedlium3/ASR/transducer_stateless/asr_datamodule.py:344",
            "egs/timit/ASR/tdnn_lstm_ctc/asr_datamodule.py:305",
            "egs/vctk/TTS/vits/tts_datamodule.py:313",
            "egs/wenetspeech/ASR/pruned_transducer_stateless2/asr_datamodule.py:380",
            "egs/wenetspeech/KWS/zipformer/asr_datamodule.py:381",
            "egs/wenetspeech4tts/TTS/f5-tts/tts_datamodule.py:279",
            "egs/wenetspeech4tts/TTS/valle/tts_datamodule.py:294",
            "egs/xbmu_amdo31/ASR/pruned_transducer_stateless5/asr_datamodule.py:383",
        )
    ),
    ("k2-fsa+icefall", "egs/librispeech/ASR/long_file_recog/asr_datamodule.py:178", "DL201", F, "S4", "recognize.py:377 builds it once and iterates it once"),
    ("k2-fsa+icefall", "test/test_ali.py:55", "DL201", F, "S4", "one call, one pass (:68)"),
    # --- pyannote/pyannote-audio
    ("pyannote+pyannote-audio", "src/pyannote/audio/core/task.py:145", "DL302", F, "N7",
     "__iter__ returns self.task.train__iter__(): an endless random stream seeded per worker by "
     "utils/random.py's create_rng_for_worker (get_worker_info): no two workers yield the same samples"),
    ("pyannote+pyannote-audio", "src/pyannote/audio/core/task.py:684", "DL201", F, "N6",
     "the worker-side RNG is seeded with model.current_epoch (utils/random.py:55-60): a persistent worker keeps "
     "a stale copy and would replay the same chunks every epoch"),
    ("pyannote+pyannote-audio", "src/pyannote/audio/core/task.py:818", "DL201", T, "",
     "val_dataloader hook over a map-style ValDataset, every epoch"),
    ("pyannote+pyannote-audio", "src/pyannote/audio/tasks/separation/PixIT.py:86", "DL302", F, "N7",
     "same as core/task.py:145, via val__iter__"),
    ("pyannote+pyannote-audio", "src/pyannote/audio/tasks/separation/PixIT.py:430", "DL201", F, "N6",
     "val__iter__ seeds its RNG with model.current_epoch in the worker (PixIT.py:455)"),
    # --- coqui-ai/TTS: coqui's `trainer` package calls model.get_data_loader() again in every
    # train_epoch()/eval_epoch() (trainer 0.0.36, trainer/trainer.py:1483, :1628)
    ("coqui-ai+TTS", "TTS/bin/compute_attention_masks.py:100", "DL206", T, "", "batch items .cuda() in the loop (:124-127)"),
    ("coqui-ai+TTS", "TTS/bin/extract_tts_spectrograms.py:50", "DL201", F, "S4",
     "setup_loader's loader is built once and iterated once by extract_spectrograms (:167, :260)"),
    ("coqui-ai+TTS", "TTS/bin/train_encoder.py:75", "DL201", T, "", "train() iterates it every epoch (:131-134)"),
    ("coqui-ai+TTS", "TTS/bin/tune_wavegrad.py:59", "DL201", T, "", "iterated once per candidate schedule (:82-83)"),
    ("coqui-ai+TTS", "TTS/bin/tune_wavegrad.py:59", "DL206", T, "", "mel.cuda() on the batch (:84)"),
    *(
        ("coqui-ai+TTS", where, "DL201", F, "N5",
         "get_data_loader: coqui's Trainer builds a fresh loader with it every epoch and iterates it once")
        for where in (
            "TTS/tts/layers/xtts/trainer/gpt_trainer.py:381",
            "TTS/tts/layers/xtts/trainer/gpt_trainer.py:391",
            "TTS/tts/models/base_tts.py:351",
            "TTS/tts/models/delightful_tts.py:1466",
            "TTS/tts/models/vits.py:1623",
            "TTS/tts/models/vits.py:1634",
            "TTS/tts/models/vits.py:1643",
            "TTS/vc/models/base_vc.py:339",
            "TTS/vocoder/models/gan.py:356",
            "TTS/vocoder/models/wavegrad.py:327",
            "TTS/vocoder/models/wavernn.py:629",
        )
    ),
    ("coqui-ai+TTS", "notebooks/ExtractTTSpectrogram.ipynb:13", "DL206", T, "", "batch fields .cuda() in the loop, no pin_memory"),
    ("coqui-ai+TTS", "notebooks/Tutorial_2_train_your_first_TTS_model.ipynb:1", "DL000", F, "N8",
     "cell 29 is ` !tts ...` (a shell escape after a space): IPython strips the leading indent, the cell runs"),
    ("coqui-ai+TTS", "tests/data_tests/test_loader.py:86", "DL201", F, "S4", "each test builds one and iterates it once"),
    # --- DL305 (merged into main at 15:40 UTC; judged on the same pinned sources)
    ("facebookresearch+dino", "eval_linear.py:72", "DL305", T, "",
     "DDP script (DistributedDataParallel :62); every rank runs the full val set every val_freq epochs, "
     "then averages identical metrics: N times the evaluation work"),
    ("huggingface+diffusers", "examples/research_projects/colossalai/train_dreambooth_colossalai.py:510", "DL305", T, "",
     "GeminiDDP data parallel with total_batch_size = batch * world_size (:547), same seed on every rank "
     "(launch_from_torch(seed=...)): every rank draws the same batches"),
    *(
        ("huggingface+diffusers", f"examples/{where}", "DL305", F, "N9",
         "a JAX/Flax script (jax.pmap over local devices, one process per host); the only DDP marker is the "
         "argparse boilerplate reading LOCAL_RANK")
        for where in (
            "controlnet/train_controlnet_flax.py:722",
            "dreambooth/train_dreambooth_flax.py:445",
            "research_projects/multi_token_textual_inversion/textual_inversion_flax.py:438",
            "text_to_image/train_text_to_image_flax.py:397",
            "textual_inversion/textual_inversion_flax.py:457",
        )
    ),
    # --- found after merging the project index (main c3fb4ad, 16:20 UTC)
    *(
        ("huggingface+diffusers", where, "DL102", T, "",
         "collate_fn=lambda ... with num_workers=args.dataloader_num_workers (default 0): crashes under spawn "
         "as soon as the option is raised")
        for where in (
            "examples/advanced_diffusion_training/train_dreambooth_lora_flux_advanced.py:1865",
            "examples/advanced_diffusion_training/train_dreambooth_lora_sd15_advanced.py:1540",
            "examples/advanced_diffusion_training/train_dreambooth_lora_sdxl_advanced.py:1874",
            "examples/dreambooth/train_dreambooth.py:1113",
            "examples/dreambooth/train_dreambooth_flux.py:1376",
            "examples/dreambooth/train_dreambooth_lora.py:1140",
            "examples/dreambooth/train_dreambooth_lora_flux.py:1486",
            "examples/dreambooth/train_dreambooth_lora_flux2.py:1526",
            "examples/dreambooth/train_dreambooth_lora_flux2.py:1654",
            "examples/dreambooth/train_dreambooth_lora_flux2_img2img.py:1478",
            "examples/dreambooth/train_dreambooth_lora_flux2_klein.py:1529",
            "examples/dreambooth/train_dreambooth_lora_flux2_klein.py:1614",
            "examples/dreambooth/train_dreambooth_lora_flux2_klein_img2img.py:1472",
            "examples/dreambooth/train_dreambooth_lora_flux_kontext.py:1730",
            "examples/dreambooth/train_dreambooth_lora_hidream.py:1342",
            "examples/dreambooth/train_dreambooth_lora_ideogram4.py:1657",
            "examples/dreambooth/train_dreambooth_lora_krea2.py:1581",
            "examples/dreambooth/train_dreambooth_lora_krea2.py:1645",
            "examples/dreambooth/train_dreambooth_lora_lumina2.py:1194",
            "examples/dreambooth/train_dreambooth_lora_qwen_image.py:1488",
            "examples/dreambooth/train_dreambooth_lora_qwen_image.py:1545",
            "examples/dreambooth/train_dreambooth_lora_sana.py:1217",
            "examples/dreambooth/train_dreambooth_lora_sd3.py:1526",
            "examples/dreambooth/train_dreambooth_lora_sdxl.py:1468",
            "examples/dreambooth/train_dreambooth_lora_z_image.py:1513",
            "examples/dreambooth/train_dreambooth_sd3.py:1365",
            "examples/research_projects/scheduled_huber_loss_training/dreambooth/train_dreambooth.py:1156",
            "examples/research_projects/scheduled_huber_loss_training/dreambooth/train_dreambooth_lora.py:1157",
            "examples/research_projects/scheduled_huber_loss_training/dreambooth/train_dreambooth_lora_sdxl.py:1504",
            "examples/research_projects/sd3_lora_colab/train_dreambooth_lora_sd3_miniature.py:860",
        )
    ),
    *(
        ("huggingface+diffusers" if where.startswith("examples/") else "facebookresearch+fairseq", where, "DL103", T, "",
         "a function nested in main (collate_fn, or preprocess_train through dataset.with_transform) reaches "
         "workers whose count is --dataloader_num_workers: crashes under spawn when it is raised")
        for where in (
            "examples/cogvideo/train_cogvideox_image_to_video_lora.py:1279",
            "examples/cogvideo/train_cogvideox_lora.py:1295",
            "examples/consistency_distillation/train_lcm_distill_lora_sdxl.py:1062",
            "examples/consistency_distillation/train_lcm_distill_lora_sdxl.py:1082",
            "examples/instruct_pix2pix/train_instruct_pix2pix.py:727",
            "examples/instruct_pix2pix/train_instruct_pix2pix.py:745",
            "examples/instruct_pix2pix/train_instruct_pix2pix_sdxl.py:928",
            "examples/instruct_pix2pix/train_instruct_pix2pix_sdxl.py:948",
            "examples/kandinsky2_2/text_to_image/train_text_to_image_decoder.py:669",
            "examples/kandinsky2_2/text_to_image/train_text_to_image_decoder.py:681",
            "examples/kandinsky2_2/text_to_image/train_text_to_image_lora_decoder.py:519",
            "examples/kandinsky2_2/text_to_image/train_text_to_image_lora_decoder.py:531",
            "examples/kandinsky2_2/text_to_image/train_text_to_image_lora_prior.py:533",
            "examples/kandinsky2_2/text_to_image/train_text_to_image_lora_prior.py:546",
            "examples/kandinsky2_2/text_to_image/train_text_to_image_prior.py:676",
            "examples/kandinsky2_2/text_to_image/train_text_to_image_prior.py:689",
            "examples/research_projects/diffusion_dpo/train_diffusion_dpo.py:718",
            "examples/research_projects/diffusion_dpo/train_diffusion_dpo_sdxl.py:854",
            "examples/research_projects/diffusion_orpo/train_diffusion_orpo_sdxl_lora.py:836",
            "examples/research_projects/instructpix2pix_lora/train_instruct_pix2pix_lora.py:819",
            "examples/research_projects/instructpix2pix_lora/train_instruct_pix2pix_lora.py:837",
            "examples/research_projects/lora/train_text_to_image_lora.py:689",
            "examples/research_projects/lora/train_text_to_image_lora.py:701",
            "examples/research_projects/lpl/train_sdxl_lpl.py:1092",
            "examples/research_projects/onnxruntime/text_to_image/train_text_to_image.py:696",
            "examples/research_projects/onnxruntime/text_to_image/train_text_to_image.py:708",
            "examples/research_projects/pixart/train_pixart_controlnet_hf.py:866",
            "examples/research_projects/pixart/train_pixart_controlnet_hf.py:889",
            "examples/research_projects/pytorch_xla/training/text_to_image/train_text_to_image_xla.py:604",
            "examples/research_projects/scheduled_huber_loss_training/text_to_image/train_text_to_image.py:822",
            "examples/research_projects/scheduled_huber_loss_training/text_to_image/train_text_to_image.py:834",
            "examples/research_projects/scheduled_huber_loss_training/text_to_image/train_text_to_image_lora.py:683",
            "examples/research_projects/scheduled_huber_loss_training/text_to_image/train_text_to_image_lora.py:695",
            "examples/research_projects/scheduled_huber_loss_training/text_to_image/train_text_to_image_lora_sdxl.py:950",
            "examples/research_projects/scheduled_huber_loss_training/text_to_image/train_text_to_image_lora_sdxl.py:976",
            "examples/research_projects/scheduled_huber_loss_training/text_to_image/train_text_to_image_sdxl.py:985",
            "examples/research_projects/wuerstchen/text_to_image/train_text_to_image_lora_prior.py:704",
            "examples/research_projects/wuerstchen/text_to_image/train_text_to_image_lora_prior.py:717",
            "examples/research_projects/wuerstchen/text_to_image/train_text_to_image_prior.py:687",
            "examples/research_projects/wuerstchen/text_to_image/train_text_to_image_prior.py:700",
            "examples/text_to_image/train_text_to_image.py:827",
            "examples/text_to_image/train_text_to_image.py:839",
            "examples/text_to_image/train_text_to_image_lora.py:699",
            "examples/text_to_image/train_text_to_image_lora.py:711",
            "examples/text_to_image/train_text_to_image_lora_sdxl.py:982",
            "examples/text_to_image/train_text_to_image_lora_sdxl.py:1008",
            "examples/text_to_image/train_text_to_image_sdxl.py:976",
            "examples/vqgan/train_vqgan.py:801",
            "examples/vqgan/train_vqgan.py:812",
        )
    ),
    ("facebookresearch+dino", "eval_copy_detection.py:160", "DL206", T, "",
     "samples.cuda(non_blocking=True) on batches from log_every(data_loader) (:164-165), no pin_memory"),
    ("nemo_toolkit-3.0.0", "nemo/collections/tts/g2p/models/ctc.py:317", "DL206", T, "",
     "batch items .to(device), device = 'cuda' if available (:343, :350-355); small text batches"),
    ("nemo_toolkit-3.0.0", "nemo/collections/tts/g2p/models/t5.py:127", "DL206", T, "",
     "input_ids.to(device) on the batch (:160-162)"),
    # --- nemo_toolkit 3.0.0 (wheel)
    ("nemo_toolkit-3.0.0", "nemo/collections/asr/models/classification_models.py:610", "DL201", F, "N10",
     "re-judged: the base (label_models.py:294,322) stores self.__setup_dataloader_from_config's loader, "
     "name-mangled to the base's own method; this subclass's _setup_dataloader_from_config serves only "
     "setup_test_data (:500) and a one-off transcription loader (:802): one pass each"),
    *(
        ("nemo_toolkit-3.0.0", f"nemo/collections/{path}", "DL201", T, "",
         "_setup_dataloader_from_config builds the train/val/test loaders (self._train_dl, returned by ModelPT's "
         "train_dataloader hook): re-iterated every epoch")
        for path in (
            "asr/models/classification_models.py:311",
            "asr/models/classification_models.py:1152",
            "asr/models/ctc_bpe_models.py:154",
            "asr/models/ctc_models.py:369",
            "asr/models/hybrid_rnnt_ctc_bpe_models.py:197",
            "asr/models/hybrid_rnnt_ctc_bpe_models_prompt.py:238",
            "asr/models/label_models.py:272",
            "asr/models/rnnt_bpe_models.py:496",
            "asr/models/rnnt_bpe_models_prompt.py:220",
            "asr/models/rnnt_models.py:541",
            "asr/models/sortformer_diar_models.py:248",
            "asr/models/ssl_models.py:223",
            "asr/models/ssl_models.py:885",
            "asr/models/transformer_bpe_models.py:258",
            "audio/models/audio_to_audio.py:267",
            "tts/models/ssl_tts.py:163",
            "tts/models/ssl_tts.py:184",
        )
    ),
    *(
        ("nemo_toolkit-3.0.0", f"nemo/collections/asr/models/classification_models.py:{line}", "DL201", F, "N2",
         "_setup_feature_label_dataloader's only callers store it as self._test_dl (:231, :498): test runs once")
        for line in (348, 529, 1181)
    ),
    ("nemo_toolkit-3.0.0", "nemo/collections/asr/parts/mixins/diarization.py:532", "DL201", F, "S4",
     "fresh loader per diarize() call, iterated once"),
    ("nemo_toolkit-3.0.0", "nemo/collections/asr/parts/mixins/transcription.py:692", "DL201", F, "S4",
     "fresh loader per transcribe() call, iterated once"),
    ("nemo_toolkit-3.0.0", "nemo/collections/tts/g2p/models/ctc.py:317", "DL201", F, "S4",
     "_setup_infer_dataloader: one loader per inference call (:348)"),
    ("nemo_toolkit-3.0.0", "nemo/collections/tts/g2p/models/t5.py:127", "DL201", F, "S4", "same (:159)"),
    # --- espnet 202511 (wheel)
    ("espnet-202511", "espnet2/speechlm/dataloader/iterator.py:251", "DL201", F, "S4",
     "build_iter builds a fresh loader over a fixed batch subset per call; each is iterated once"),
    # === third set (THIRD in real_world.py): code none of the rules was written against
    # --- Lightning-AI/litgpt
    ("Lightning-AI+litgpt", "litgpt/data/alpaca.py:94", "DL201", T, "",
     "DataModule (a LightningDataModule, num_workers=4): finetune/*.py and pretrain.py wrap "
     "train_dataloader() in CycleIterator, which calls iter() again at every StopIteration (utils.py:499): "
     "new workers each epoch; the message's 'framework' is Lightning's contract, the re-iteration here is "
     "CycleIterator's"),
    ("Lightning-AI+litgpt", "litgpt/data/alpaca.py:104", "DL201", T, "",
     "validate() iterates val_dataloader() at every eval interval (finetune/lora.py:406, :451)"),
    ("Lightning-AI+litgpt", "litgpt/data/deita.py:84", "DL201", T, "", "same as alpaca.py:94"),
    ("Lightning-AI+litgpt", "litgpt/data/deita.py:94", "DL201", T, "", "same as alpaca.py:104"),
    ("Lightning-AI+litgpt", "litgpt/data/flan.py:97", "DL201", T, "", "same as alpaca.py:94"),
    ("Lightning-AI+litgpt", "litgpt/data/json_data.py:97", "DL201", T, "", "same as alpaca.py:94"),
    ("Lightning-AI+litgpt", "litgpt/data/json_data.py:107", "DL201", T, "", "same as alpaca.py:104"),
    ("Lightning-AI+litgpt", "litgpt/data/lima.py:100", "DL201", T, "", "same as alpaca.py:94"),
    ("Lightning-AI+litgpt", "litgpt/data/lima.py:110", "DL201", T, "", "same as alpaca.py:104"),
    ("Lightning-AI+litgpt", "litgpt/data/longform.py:77", "DL201", T, "", "same as alpaca.py:94"),
    # --- mosaicml/composer
    ("mosaicml+composer", "examples/finetune_huggingface.ipynb:4", "DL206", D, "",
     "cell 11: eval loader; one batch taken with next(iter()) and .cuda()'d for a demo prediction (cell "
     "24): copied from pageable memory as claimed, but one copy has nothing to overlap (training goes "
     "through composer's Trainer, which dllint does not model)"),
    ("mosaicml+composer", "examples/functional_api.ipynb:20", "DL201", T, "",
     "cell 5: train loader (num_workers=2) iterated every epoch by train_and_eval (cell 9, 5 epochs)"),
    ("mosaicml+composer", "examples/functional_api.ipynb:20", "DL206", T, "",
     "cell 5: X.to(device) in train_and_eval's loops, device 'cuda' if available"),
    ("mosaicml+composer", "examples/functional_api.ipynb:25", "DL201", T, "",
     "cell 5: test loader (num_workers=2) iterated every epoch by train_and_eval (cell 9, 5 epochs)"),
    ("mosaicml+composer", "examples/functional_api.ipynb:25", "DL206", T, "",
     "cell 5: X.to(device) in train_and_eval's loops, device 'cuda' if available"),
    ("mosaicml+composer", "examples/functional_api.ipynb:17", "DL201", T, "",
     "cell 13: the same for the ColOut train loader"),
    ("mosaicml+composer", "examples/functional_api.ipynb:17", "DL206", T, "", "cell 13: same"),
    ("mosaicml+composer", "examples/functional_api.ipynb:22", "DL201", T, "",
     "cell 13: the same for the ColOut test loader"),
    ("mosaicml+composer", "examples/functional_api.ipynb:22", "DL206", T, "", "cell 13: same"),
    ("mosaicml+composer", "examples/profiler_demo.py:79", "DL101", T, "",
     "module-level DataLoader(num_workers=8) and trainer.fit() (:104) with no main guard: spawn workers "
     "re-run the training"),
    # --- yunjey/pytorch-tutorial
    ("yunjey+pytorch-tutorial", "tutorials/01-basics/feedforward_neural_network/main.py:29", "DL206", T, "",
     "train loader: images/labels .to(device) in its loop, device 'cuda' if available"),
    ("yunjey+pytorch-tutorial", "tutorials/01-basics/feedforward_neural_network/main.py:33", "DL206", T, "",
     "test loader: images/labels .to(device) in its loop, device 'cuda' if available"),
    ("yunjey+pytorch-tutorial", "tutorials/02-intermediate/bidirectional_recurrent_neural_network/main.py:31", "DL206", T, "",
     "train loader: images/labels .to(device) in its loop, device 'cuda' if available"),
    ("yunjey+pytorch-tutorial", "tutorials/02-intermediate/bidirectional_recurrent_neural_network/main.py:35", "DL206", T, "",
     "test loader: images/labels .to(device) in its loop, device 'cuda' if available"),
    ("yunjey+pytorch-tutorial", "tutorials/02-intermediate/convolutional_neural_network/main.py:27", "DL206", T, "",
     "train loader: images/labels .to(device) in its loop, device 'cuda' if available"),
    ("yunjey+pytorch-tutorial", "tutorials/02-intermediate/convolutional_neural_network/main.py:31", "DL206", T, "",
     "test loader: images/labels .to(device) in its loop, device 'cuda' if available"),
    ("yunjey+pytorch-tutorial", "tutorials/02-intermediate/deep_residual_network/main.py:40", "DL206", T, "",
     "train loader: images/labels .to(device) in its loop, device 'cuda' if available"),
    ("yunjey+pytorch-tutorial", "tutorials/02-intermediate/deep_residual_network/main.py:44", "DL206", T, "",
     "test loader: images/labels .to(device) in its loop, device 'cuda' if available"),
    ("yunjey+pytorch-tutorial", "tutorials/02-intermediate/recurrent_neural_network/main.py:31", "DL206", T, "",
     "train loader: images/labels .to(device) in its loop, device 'cuda' if available"),
    ("yunjey+pytorch-tutorial", "tutorials/02-intermediate/recurrent_neural_network/main.py:35", "DL206", T, "",
     "test loader: images/labels .to(device) in its loop, device 'cuda' if available"),
    ("yunjey+pytorch-tutorial", "tutorials/03-advanced/image_captioning/data_loader.py:100", "DL201", T, "",
     "get_loader's loader (--num_workers 2) iterated per epoch by train.py:51"),
    ("yunjey+pytorch-tutorial", "tutorials/03-advanced/image_captioning/data_loader.py:100", "DL206", T, "",
     "train.py:54 images.to(device), device 'cuda' if available"),
    ("yunjey+pytorch-tutorial", "tutorials/03-advanced/variational_autoencoder/main.py:33", "DL206", T, "",
     "x.to(device) in the epoch loop (:75)"),
    # --- huggingface/peft
    ("huggingface+peft", "examples/boft_controlnet/train_controlnet.py:298", "DL201", D, "",
     "--dataloader_num_workers defaults to 0 in utils/args_loader.py (another module: not followed, so the "
     "value is unknown), 2 in the shipped train_controlnet.sh; per epoch (:405) when > 0"),
    ("huggingface+peft", "examples/boft_dreambooth/train_dreambooth.py:334", "DL201", T, "",
     "--num_dataloader_workers (default 1), iterated per epoch"),
    ("huggingface+peft", "examples/boft_dreambooth/train_dreambooth.py:338", "DL102", T, "",
     "collate_fn=lambda with --num_dataloader_workers (default 1); the example's boft_dreambooth.md says to set the workers to 0 on Windows"),
    ("huggingface+peft", "examples/deft_dreambooth/train_dreambooth.py:813", "DL201", T, "",
     "--num_dataloader_workers (default 1), iterated per epoch"),
    ("huggingface+peft", "examples/deft_dreambooth/train_dreambooth.py:817", "DL102", T, "",
     "collate_fn=lambda with --num_dataloader_workers (default 1)"),
    ("huggingface+peft", "examples/hra_dreambooth/train_dreambooth.py:332", "DL201", T, "",
     "--num_dataloader_workers (default 1), iterated per epoch"),
    ("huggingface+peft", "examples/hra_dreambooth/train_dreambooth.py:336", "DL102", T, "",
     "collate_fn=lambda with --num_dataloader_workers (default 1)"),
    ("huggingface+peft", "examples/lora_dreambooth/train_dreambooth.py:806", "DL201", T, "",
     "--num_dataloader_workers (default 1), iterated per epoch"),
    ("huggingface+peft", "examples/lora_dreambooth/train_dreambooth.py:810", "DL102", T, "",
     "collate_fn=lambda with --num_dataloader_workers (default 1)"),
    ("huggingface+peft", "examples/oft_dreambooth/train_dreambooth.py:820", "DL201", T, "",
     "--num_dataloader_workers (default 1), iterated per epoch"),
    ("huggingface+peft", "examples/oft_dreambooth/train_dreambooth.py:824", "DL102", T, "",
     "collate_fn=lambda with --num_dataloader_workers (default 1)"),
    ("huggingface+peft", "examples/stable_diffusion/train_dreambooth.py:968", "DL201", T, "",
     "num_workers=1, iterated per epoch"),
    ("huggingface+peft", "examples/stable_diffusion/train_dreambooth.py:972", "DL102", T, "",
     "collate_fn=lambda with num_workers=1"),
    ("huggingface+peft", "examples/sequence_classification/FourierFT.ipynb:6", "DL206", T, "",
     "train loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/FourierFT.ipynb:7", "DL206", T, "",
     "eval loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/IA3.ipynb:36", "DL206", T, "",
     "train loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/IA3.ipynb:37", "DL206", T, "",
     "eval loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/LoRA-torchao-8bit-dynamic-activation.ipynb:2", "DL206", T, "",
     "train loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/LoRA-torchao-8bit-dynamic-activation.ipynb:8", "DL206", T, "",
     "eval loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/LoRA-torchao-8bit.ipynb:2", "DL206", T, "",
     "train loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/LoRA-torchao-8bit.ipynb:8", "DL206", T, "",
     "eval loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/LoRA.ipynb:36", "DL206", T, "",
     "train loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/LoRA.ipynb:37", "DL206", T, "",
     "eval loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/P_Tuning.ipynb:36", "DL206", T, "",
     "train loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/P_Tuning.ipynb:37", "DL206", T, "",
     "eval loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/Prompt_Tuning.ipynb:36", "DL206", T, "",
     "train loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/Prompt_Tuning.ipynb:37", "DL206", T, "",
     "eval loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/VBLoRA.ipynb:6", "DL206", T, "",
     "train loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/VBLoRA.ipynb:7", "DL206", T, "",
     "eval loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/VeRA.ipynb:6", "DL206", T, "",
     "train loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/VeRA.ipynb:7", "DL206", T, "",
     "eval loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/prefix_tuning.ipynb:36", "DL206", T, "",
     "train loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/sequence_classification/prefix_tuning.ipynb:37", "DL206", T, "",
     "eval loader: batch.to(device) in its loop every epoch; device is the current accelerator (else "
     "'cuda')"),
    ("huggingface+peft", "examples/token_classification/peft_lora_token_cls.ipynb:31", "DL206", T, "",
     "train loader: batch[i].to(device) in its loop"),
    ("huggingface+peft", "examples/token_classification/peft_lora_token_cls.ipynb:35", "DL206", T, "",
     "eval loader: batch[i].to(device) in its loop"),
    # === fourth set (FOURTH in real_world.py, issue 25): 19 code bases, linted from their root
    # --- jik876/hifi-gan
    ("jik876+hifi-gan", "train.py:83", "DL201", T, "", "num_workers=h.num_workers (4 in config_v1.json), epoch loop (:105, :113)"),
    ("jik876+hifi-gan", "train.py:94", "DL201", T, "",
     "rank-0 validation loader (num_workers=1) re-run every validation_interval steps (:187-192)"),
    # --- NVIDIA/tacotron2
    ("NVIDIA+tacotron2", "train.py:49", "DL301", T, "",
     "train DistributedSampler, loader iterated every epoch (:206-208), set_epoch never called in the repository"),
    ("NVIDIA+tacotron2", "train.py:55", "DL201", T, "", "num_workers=1, epoch loop (:206-208)"),
    # --- rixwew/pytorch-fm
    ("rixwew+pytorch-fm", "examples/main.py:157", "DL201", T, "", "8 workers, train() every epoch (:165)"),
    ("rixwew+pytorch-fm", "examples/main.py:158", "DL201", T, "", "8 workers, test() on the valid loader every epoch (:166)"),
    ("rixwew+pytorch-fm", "torchfm/dataset/avazu.py:36", "DL104", T, "",
     "self.env = lmdb.open(...) in __init__; examples/main.py sends the dataset to 8 workers: spawn cannot pickle it"),
    ("rixwew+pytorch-fm", "torchfm/dataset/criteo.py:41", "DL104", T, "", "same as avazu.py:36"),
    # --- VainF/DeepLabV3Plus-Pytorch
    ("VainF+DeepLabV3Plus-Pytorch", "main.py:238", "DL201", T, "",
     "2 workers; `while True: for ... in train_loader` until total_itrs: every pass restarts them (:323-327)"),
    ("VainF+DeepLabV3Plus-Pytorch", "main.py:238", "DL206", T, "",
     "images.to(device) in the loop (:330), device 'cuda' if available, 2 workers, no pin_memory"),
    ("VainF+DeepLabV3Plus-Pytorch", "main.py:241", "DL201", T, "", "validate() every val_interval iterations (:350-355)"),
    # --- thuml/Time-Series-Library
    ("thuml+Time-Series-Library", "data_provider/data_factory.py:40", "DL201", T, "",
     "anomaly-detection loaders (run.py --num_workers 10): train per epoch, vali every epoch (exp_anomaly_detection.py)"),
    ("thuml+Time-Series-Library", "data_provider/data_factory.py:55", "DL201", T, "",
     "classification loaders re-iterated per epoch by exp_classification.py; the message names "
     "exp_anomaly_detection.py:32, which never gets this branch (audit_shapes X1)"),
    ("thuml+Time-Series-Library", "data_provider/data_factory.py:61", "DL102", T, "",
     "collate_fn=lambda with num_workers=args.num_workers (default 10)"),
    ("thuml+Time-Series-Library", "data_provider/data_factory.py:80", "DL201", T, "",
     "forecasting/imputation loaders re-iterated per epoch (exp_long_term_forecasting.py:96-102, vali :151-152); "
     "the message names exp_anomaly_detection.py:32 (X1)"),
    ("thuml+Time-Series-Library", "tutorial/TimesNet_tutorial.ipynb:4", "DL000", T, "",
     "a code cell is `with torch.cuda.amp.autocast():` followed by `...` at column 0: SyntaxError when run"),
    # --- facebookresearch/swav
    ("facebookresearch+swav", "eval_linear.py:119", "DL201", T, "", "--workers 10, train() every epoch (:209)"),
    ("facebookresearch+swav", "eval_linear.py:126", "DL201", T, "", "validate_network every epoch (:210)"),
    ("facebookresearch+swav", "eval_linear.py:126", "DL305", T, "",
     "val loader without a sampler under DDP: every rank evaluates the whole set every epoch (as DINO's eval_linear)"),
    ("facebookresearch+swav", "eval_semisup.py:121", "DL201", T, "", "train() every epoch"),
    ("facebookresearch+swav", "eval_semisup.py:128", "DL201", T, "", "validate_network every epoch (:210)"),
    ("facebookresearch+swav", "eval_semisup.py:128", "DL305", T, "", "same as eval_linear.py:126"),
    ("facebookresearch+swav", "main_deepclusterv2.py:131", "DL201", T, "", "init_memory once, then train() every epoch"),
    ("facebookresearch+swav", "main_swav.py:139", "DL201", T, "", "train() every epoch (:234)"),
    # --- facebookresearch/vicreg
    ("facebookresearch+vicreg", "evaluate.py:227", "DL201", T, "", "--workers 8, epoch loop (:233-242)"),
    ("facebookresearch+vicreg", "evaluate.py:230", "DL201", T, "", "rank 0 evaluates it every epoch (:269-273)"),
    ("facebookresearch+vicreg", "main_vicreg.py:98", "DL201", T, "", "--num-workers 10, epoch loop (:129-131)"),
    # --- snap-stanford/ogb
    ("snap-stanford+ogb", "examples/linkproppred/biokg/run.py:197", "DL102", T, "",
     "defaultdict(lambda: 4) stored by TrainDataset (self.count), sent to max(1, cpu_num//2) workers: "
     "spawn cannot pickle the lambda"),
    ("snap-stanford+ogb", "examples/linkproppred/wikikg2/run.py:190", "DL102", T, "", "same as biokg/run.py:197"),
    ("snap-stanford+ogb", "examples/lsc/mag240m/sign.py:136", "DL107", T, "",
     "MyDataset is defined under the main guard and sent to 6 workers (:162): spawn workers cannot find it"),
    ("snap-stanford+ogb", "examples/lsc/mag240m/sign.py:165", "DL206", F, "A1",
     "test loader without workers; its only copies are blocking x.to(device) (:185): RULES.md says silent"),
    # --- Project-MONAI/research-contributions
    ("Project-MONAI+research-contributions", "DAE/Pretrain_full_contrast/data/data_finetune.py:23", "DL201", D, "",
     "dead in this tree: build_loader is only called with is_pretrain=True and calls build_loader_finetune "
     "with the wrong arity; a DistributedSampler train loader, re-iterated per epoch if it were used"),
    ("Project-MONAI+research-contributions", "DAE/Pretrain_full_contrast/data/data_finetune.py:32", "DL201", D, "",
     "same factory, val loader"),
    ("Project-MONAI+research-contributions", "DAE/Pretrain_full_contrast/data/data_pretrain.py:354", "DL201", T, "",
     "8 workers, train_one_epoch every epoch (main_runner.py:193-197)"),
    ("Project-MONAI+research-contributions", "DAE/Pretrain_full_contrast/data/data_pretrain.py:364", "DL201", T, "",
     "validate() every epoch (main_runner.py:199)"),
    ("Project-MONAI+research-contributions", "lamp-automated-model-parallelism/train.py:106", "DL201", T, "",
     "4 workers, epoch loop (:184-187)"),
    ("Project-MONAI+research-contributions", "lamp-automated-model-parallelism/train.py:135", "DL201", T, "",
     "other arm of the same if, same loop"),
    ("Project-MONAI+research-contributions", "lamp-automated-model-parallelism/train.py:144", "DL201", T, "",
     "1 worker, validation every 10 epochs (:207-212)"),
    # reported once MONAI's loaders are loader calls (the shapes branch at e27b865); read then
    ("Project-MONAI+research-contributions", "auto3dseg/algorithm_templates/dints/scripts/infer.py:195", "DL305", F, "A3",
     "an inference class: RANK is read only to let rank 0 write a config (:135-136) and dist.get_rank() only to "
     "name the device; the script starts no process group and trains nothing"),
    ("Project-MONAI+research-contributions",
     "prostate-mri-lesion-seg/prostate_mri_lesion_seg_app/custom_lesion_seg_operator.py:289", "DL206", D, "",
     "one volume taken with next(iter()) and .to('cuda') once: pageable as claimed, but one blocking copy has "
     "nothing to overlap (as composer's next(iter()) in the third audit)"),
    # --- awslabs/dgl-lifesci
    ("awslabs+dgl-lifesci", "examples/binding_affinity_prediction/main.py:91", "DL201", T, "",
     "num_workers = cpu_count() when --num_workers is 0 (:178-179); train loader every epoch (:118-119)"),
    ("awslabs+dgl-lifesci", "examples/binding_affinity_prediction/main.py:97", "DL201", T, "", "test loader evaluated every epoch (:126-127)"),
    ("awslabs+dgl-lifesci", "examples/binding_affinity_prediction/main.py:102", "DL201", T, "", "val loader every epoch (:121-122)"),
    ("awslabs+dgl-lifesci", "examples/generative_models/jtvae/pretrain.py:41", "DL201", T, "", "--num-workers 4, epoch loop (:57)"),
    ("awslabs+dgl-lifesci", "examples/generative_models/jtvae/vaetrain.py:32", "DL201", T, "", "--num-workers 4, epoch loop (:52)"),
    ("awslabs+dgl-lifesci", "examples/property_prediction/csv_data_configuration/classification_train.py:74", "DL201", T, "",
     "-nw default 1, run_a_train_epoch every epoch (:89-91)"),
    ("awslabs+dgl-lifesci", "examples/property_prediction/csv_data_configuration/classification_train.py:76", "DL201", T, "",
     "val loader every epoch (:94)"),
    ("awslabs+dgl-lifesci", "examples/property_prediction/csv_data_configuration/regression_train.py:73", "DL201", T, "",
     "same as classification_train.py:74"),
    ("awslabs+dgl-lifesci", "examples/property_prediction/csv_data_configuration/regression_train.py:75", "DL201", T, "",
     "same as classification_train.py:76"),
    *(
        ("awslabs+dgl-lifesci", f"examples/property_prediction/moleculenet/{name}.py:{line}", "DL201", D, "",
         "-nw defaults to 0 (args read as parse_args().__dict__['num_workers'], not resolved): no workers with the "
         "defaults; with -nw N the loader is re-iterated every epoch (:86-91)")
        for name in ("classification", "regression") for line in (62, 64)
    ),
    ("awslabs+dgl-lifesci", "examples/property_prediction/pretrain_gnns/chem/pretrain_masking.py:192", "DL201", T, "",
     "--num_workers 8, train() loops over epochs (:74)"),
    ("awslabs+dgl-lifesci", "examples/property_prediction/pretrain_gnns/chem/pretrain_supervised.py:154", "DL201", T, "",
     "--num_workers 8, train() loops over epochs (:26)"),
    ("awslabs+dgl-lifesci", "examples/property_prediction/pretrain_gnns/chem/pretrain_supervised.py:154", "DL206", T, "",
     "found after the audit (M1's fix): 8 workers, no pin_memory; train(..., device) copies node_feats, edge_feats "
     "and is_valid .to(device) (:38-47); device cuda:N if available (:118). The twin of pretrain_masking.py:192"),
    ("awslabs+dgl-lifesci", "examples/reaction_prediction/rexgen_direct/candidate_ranking_train.py:47", "DL201", T, "",
     "-nw default 100, epoch loop (:68)"),
    ("awslabs+dgl-lifesci", "examples/reaction_prediction/rexgen_direct/candidate_ranking_train.py:50", "DL201", T, "",
     "candidate_ranking_eval at every learning-rate decay (:127-135) and once at the end (:145)"),
    ("awslabs+dgl-lifesci", "examples/reaction_prediction/rexgen_direct/find_reaction_center_train.py:52", "DL201", T, "",
     "-np default 4, epoch loop (:84-86)"),
    ("awslabs+dgl-lifesci", "examples/reaction_prediction/rexgen_direct/find_reaction_center_train.py:52", "DL305", F, "A2",
     "each rank keeps its own slice: get_center_subset(train_set, rank, num_devices) (utils.py:74-97) cuts the "
     "dataset's lists by rank before the loader is built"),
    # --- ashleve/lightning-hydra-template
    *(
        ("ashleve+lightning-hydra-template", f"src/data/mnist_datamodule.py:{line}", "DL201", D, "",
         f"{hook} hook, num_workers=self.hparams.num_workers: 0 as shipped (the __init__ default, "
         "configs/data/mnist.yaml, the tests), so no workers restart; the config is the template's knob, "
         "and with num_workers > 0 Lightning re-iterates it every epoch without persistent_workers")
        for line, hook in ((141, "train_dataloader"), (154, "val_dataloader"))
    ),
    # --- microsoft/DeepSpeedExamples (training/)
    *(
        ("microsoft+DeepSpeedExamples", where, "DL301", T, "",
         "train DistributedSampler (under the DeepSpeed launcher's --local_rank), iterated in the "
         "`for _ in trange(num_train_epochs)` loop; set_epoch is never called: every epoch repeats one order")
        for where in (
            "training/BingBertGlue/run_glue_classifier_bert_base.py:915",
            "training/BingBertGlue/run_glue_classifier_bert_large.py:1002",
            "training/BingBertSquad/nvidia_run_squad_baseline.py:988",
            "training/BingBertSquad/nvidia_run_squad_deepspeed.py:984",
            "training/bing_bert/run_glue_classifier_bert_base.py:938",
            "training/bing_bert/run_glue_classifier_bert_large.py:1024",
        )
    ),
    ("microsoft+DeepSpeedExamples", "training/data_efficiency/gpt_finetuning/run_clm_no_trainer.py:408", "DL301", T, "",
     "without --curriculum_learning the script's own loader is iterated in `while consumed_token < total_tokens` "
     "(:565-570) and set_epoch is never called"),
    ("microsoft+DeepSpeedExamples", "training/cifar/cifar10_tutorial.py:78", "DL201", T, "",
     "module-level trainloader (2 workers), 2-epoch loop (:173)"),
    ("microsoft+DeepSpeedExamples", "training/cifar/cifar10_tutorial.py:87", "DL201", T, "",
     "testloader (2 workers) iterated twice (:257, :278)"),
    ("microsoft+DeepSpeedExamples", "training/cifar/cifar10_tutorial.py:112", "DL101", T, "",
     "module-level `dataiter = iter(trainloader)` starts 2 workers; no main guard in the file"),
    ("microsoft+DeepSpeedExamples", "training/data_efficiency/vit_finetuning/main_cifar.py:86", "DL201", T, "",
     "--workers 4, train() every epoch (:115-117)"),
    ("microsoft+DeepSpeedExamples", "training/data_efficiency/vit_finetuning/main_cifar.py:88", "DL201", T, "",
     "validate() every epoch (:118)"),
    ("microsoft+DeepSpeedExamples", "training/data_efficiency/vit_finetuning/main_imagenet.py:277", "DL201", T, "",
     "val loader, validate() every epoch (:313)"),
    ("microsoft+DeepSpeedExamples", "training/data_efficiency/vit_finetuning/main_imagenet.py:279", "DL201", T, "",
     "train loader, every epoch (:304-306)"),
    ("microsoft+DeepSpeedExamples", "training/imagenet/main.py:254", "DL201", T, "", "-j 4, train() every epoch (:269-273)"),
    ("microsoft+DeepSpeedExamples", "training/imagenet/main.py:258", "DL201", T, "", "validate() every epoch (:277)"),
    ("microsoft+DeepSpeedExamples", "training/gan/gan_baseline_train.py:80", "DL201", T, "",
     "num_workers=int(args.workers), --workers default 16 (gan/utils.py), epoch loop (:109-110)"),
    ("microsoft+DeepSpeedExamples", "training/gan/gan_baseline_train.py:80", "DL206", T, "",
     "data[0].to(device) in the loop (:116), device cuda:0 with --cuda, multi-worker, no pin_memory"),
    ("microsoft+DeepSpeedExamples", "training/gan/gan_deepspeed_train.py:82", "DL201", T, "", "same loader, epoch loop (:115-116)"),
    ("microsoft+DeepSpeedExamples", "training/gan/gan_deepspeed_train.py:82", "DL206", T, "",
     "data[0].to(device) (:122), device = torch.device('cuda', local_rank)"),
    ("microsoft+DeepSpeedExamples", "training/offload_states/offload_states.py:42", "DL305", D, "",
     "a ZeRO-3 offload benchmark: one unshuffled pass of backward/step over a TensorDataset of torch.randn built on "
     "each rank's device (no seed); deepspeed.initialize without training_data (:47). The row's conditions hold "
     "(every rank iterates the whole set), but the data is random per rank and the step count is the point"),
    ("microsoft+DeepSpeedExamples", "training/stable_diffusion/train_sd_distil_lora.py:1007", "DL102", T, "",
     "collate_fn=lambda with num_workers=args.dataloader_num_workers (may be > 0), as diffusers' scripts"),
    # --- haotian-liu/LLaVA (training goes through HF Trainer with command-line TrainingArguments: nothing to see)
    ("haotian-liu+LLaVA", "llava/eval/model_vqa_loader.py:75", "DL206", T, "",
     "4 workers, no pin_memory; the loop copies input_ids and image_tensor with .to(device='cuda', non_blocking=True) "
     "(:102, :107): from pageable memory those copies are synchronous"),
)

# Sources whose entry points were read for misses (the fourth set, all of it: a source with no finding
# and no miss is in here too, so that a finding it gains later is listed as unjudged).
MISS_AUDITED = frozenset(
    {
        "jik876+hifi-gan", "NVIDIA+tacotron2", "rixwew+pytorch-fm", "VainF+DeepLabV3Plus-Pytorch",
        "thuml+Time-Series-Library", "crowsonkb+k-diffusion", "facebookresearch+swav", "facebookresearch+vicreg",
        "snap-stanford+ogb", "tloen+alpaca-lora", "Project-MONAI+research-contributions", "EleutherAI+gpt-neox",
        "awslabs+dgl-lifesci", "meta-llama+llama-recipes", "lopuhin+kaggle-imet-2019", "haotian-liu+LLaVA",
        "THUDM+GraphMAE", "ashleve+lightning-hydra-template", "microsoft+DeepSpeedExamples",
    }
)

# Misses of the fourth audit: (source, "path:line", code, shape, reason) where RULES.md says the rule
# fires and it did not, at the line where the finding belongs (the loader call, or what the row names).
# ``shape`` names a missed shape of FALSE_POSITIVE_SHAPES.md (M1...). real_world.py --judge counts a
# finding at such a key as a miss now reported (a true positive) and lists the misses still silent.
MISSES: tuple[tuple[str, str, str, str, str], ...] = (
    # --- NVIDIA/tacotron2: model.parse_batch(batch) -> utils.to_gpu -> .cuda(non_blocking=True)
    ("NVIDIA+tacotron2", "train.py:55", "DL206", "M2",
     "1 worker, explicit pin_memory=False; batches copied with non_blocking=True one call away (model.py:473-481)"),
    ("NVIDIA+tacotron2", "train.py:127", "DL206", "M2", "validate()'s loader, same copies"),
    # --- rixwew/pytorch-fm: device = torch.device(args.device), --device default 'cuda:0', passed to train()/test()
    ("rixwew+pytorch-fm", "examples/main.py:157", "DL206", "M1", "8 workers, fields.to(device) in train() (:117)"),
    ("rixwew+pytorch-fm", "examples/main.py:158", "DL206", "M1", "8 workers, fields.to(device) in test() (:134)"),
    ("rixwew+pytorch-fm", "examples/main.py:159", "DL206", "M1", "8 workers, test() once on the test loader"),
    # --- VainF/DeepLabV3Plus-Pytorch
    ("VainF+DeepLabV3Plus-Pytorch", "main.py:241", "DL206", "M1",
     "2 workers; validate(opts, model, val_loader, device, ...) copies images.to(device) (:170); the same copy "
     "inlined in main() fires at :238"),
    # --- snap-stanford/ogb
    ("snap-stanford+ogb", "examples/lsc/mag240m/sign.py:162", "DL206", "M1",
     "6 workers (persistent), x.to(device) in train(model, loader, optimizer, device) (:86); device 'cuda:N' if available"),
    # --- awslabs/dgl-lifesci
    ("awslabs+dgl-lifesci", "examples/property_prediction/pretrain_gnns/chem/pretrain_masking.py:192", "DL206", "M1",
     "8 workers, no pin_memory; train(args, ..., train_dataloader, ..., device) copies the batch's node_feats, "
     "edge_feats and masked index/label tensors .to(device) (:85-91); device cuda:N if available (:171)"),
    *(
        ("snap-stanford+ogb", f"examples/linkproppred/{task}/run.py:{line}", "DL201", "M3",
         "max(1, cpu_num//2) workers; BidirectionalOneShotIterator.one_shot_iterator (dataloader.py) is "
         "`while True: for data in dataloader: yield data`: every pass restarts the workers")
        for task, lines in (("biokg", (232, 243)), ("wikikg2", (218, 228))) for line in lines
    ),
    ("snap-stanford+ogb", "examples/lsc/mag240m/gnn.py:101", "DL201", "M4",
     "train_dataloader hook returns torch_geometric NeighborSampler(num_workers=4); Trainer(max_epochs=args.epochs)"),
    ("snap-stanford+ogb", "examples/lsc/mag240m/gnn.py:108", "DL201", "M4", "val_dataloader hook, num_workers=2"),
    ("snap-stanford+ogb", "examples/lsc/mag240m/rgnn.py:253", "DL201", "M4", "same as gnn.py:101"),
    ("snap-stanford+ogb", "examples/lsc/mag240m/rgnn.py:260", "DL201", "M4", "same as gnn.py:108"),
    ("snap-stanford+ogb", "examples/nodeproppred/products/cluster_gcn.py:148", "DL201", "M4",
     "ClusterLoader(num_workers=args.num_workers, default 12), train() every epoch (:164-165)"),
    ("snap-stanford+ogb", "examples/nodeproppred/products/cluster_gcn.py:151", "DL201", "M8",
     "NeighborSampler subgraph loader (12 workers; M4 too), test() every eval_steps epochs (:172-173) hands it "
     "to model.inference(x_all, subgraph_loader, device), a method of the same file's SAGE class, which loops over it"),
    ("snap-stanford+ogb", "examples/nodeproppred/products/graph_saint.py:167", "DL201", "M8",
     "NeighborSampler(num_workers=12; M4 too), test() every eval_steps epochs (:184-185) -> model.inference(...)"),
    ("snap-stanford+ogb", "examples/nodeproppred/mag/sampler.py:84", "DL201", "M4",
     "module-level NeighborSampler(num_workers=12), train(epoch) in the epoch loop (:318-322)"),
    ("snap-stanford+ogb", "examples/nodeproppred/mag/sampler.py:84", "DL206", "M4",
     "12 workers, n_id.to(device) and adj.to(device) in train() (:271-273), device 'cuda:N' if available "
     "(:246, bound once); PyG batches' tensors are pinnable (found when the shapes branch reported it)"),
    ("snap-stanford+ogb", "examples/nodeproppred/mag/sampler.py:318", "DL101", "M4",
     "module-level `for run in range(args.runs)` iterates the 12-worker loader through train(); no main guard"),
    ("snap-stanford+ogb", "examples/nodeproppred/mag/cluster_gcn.py:84", "DL201", "M4",
     "module-level ClusterLoader(num_workers=12) (torch_geometric.data), train(epoch) in the module-level epoch "
     "loop (:308-311) (found when the shapes branch reported it)"),
    ("snap-stanford+ogb", "examples/nodeproppred/mag/cluster_gcn.py:84", "DL206", "M4",
     "data.to(device) in train() (:260-261), device 'cuda:N' if available (:244, bound once); PyG Data is pinnable"),
    ("snap-stanford+ogb", "examples/nodeproppred/mag/cluster_gcn.py:308", "DL101", "M4",
     "module-level `for run in range(args.runs)` iterates the 12-worker loader through train(); no main guard"),
    ("snap-stanford+ogb", "examples/linkproppred/citation2/cluster_gcn.py:194", "DL201", "M4",
     "ClusterLoader (12 workers), train() every epoch (:220-221)"),
    ("snap-stanford+ogb", "examples/linkproppred/citation2/sampler.py:231", "DL201", "M4",
     "PositiveLinkNeighborSampler, the project's subclass of NeighborSampler (12 workers), every epoch (:270-271)"),
    ("snap-stanford+ogb", "examples/linkproppred/citation2/sampler.py:237", "DL201", "M4", "NegativeLinkNeighborSampler, same"),
    ("snap-stanford+ogb", "examples/linkproppred/citation2/sampler.py:243", "DL201", "M8",
     "NeighborSampler subgraph loader (M4 too), test() every eval_steps epochs (:275-276) -> model.inference(...)"),
    # --- THUDM/GraphMAE: chem/ uses PyG's DataLoader (deprecated torch_geometric.data path) and its own
    # DataLoader subclasses (chem/dataloader.py); device = torch.device("cuda:N") if available (bound once)
    *(
        ("THUDM+GraphMAE", f"chem/finetune.py:{line}", "DL201", "M4",
         f"torch_geometric.data.DataLoader, --num_workers 4; the {which} loader is iterated every epoch "
         f"(train() / eval(), :221-235)")
        for line, which in ((175, "train"), (176, "val"), (177, "test"))
    ),
    *(
        ("THUDM+GraphMAE", f"chem/finetune.py:{line}", "DL206", "M1",
         "batch.to(device) in train()/eval(), which get the device as a parameter (:34, :59); PyG batches "
         "are pinnable (M4 too)")
        for line in (175, 176, 177)
    ),
    ("THUDM+GraphMAE", "chem/pretraining.py:169", "DL201", "M9",
     "DataLoaderMaskingPred, the project's subclass of torch's DataLoader in chem/dataloader.py, "
     "num_workers=--num_workers (8), shuffle=True; train_mae() iterates it every epoch (:212-218)"),
    ("THUDM+GraphMAE", "chem/pretraining.py:169", "DL206", "M1",
     "batch.to(device) in train_mae(), device a parameter (:70); the loader is the project's subclass (M9 too)"),
    # --- microsoft/DeepSpeedExamples: DeepSpeed's data parallelism without training_data=... (issue 25's shape)
    ("microsoft+DeepSpeedExamples", "training/HelloDeepSpeed/train_bert_ds.py:285", "DL305", "M10",
     "shuffled loader without a sampler (wrapped in InfiniteIterator); deepspeed.initialize gets no training_data "
     "(:801) and the script reads RANK (:37): every rank trains on the whole dataset"),
    ("microsoft+DeepSpeedExamples", "training/data_efficiency/gpt_finetuning/run_clm_no_trainer.py:413", "DL305", "M10",
     "eval loader with a SequentialSampler under deepspeed.init_distributed (:257): every rank evaluates the whole "
     "set (as swav's and DINO's val loaders)"),
    ("microsoft+DeepSpeedExamples", "training/data_efficiency/vit_finetuning/main_cifar.py:86", "DL305", "M10",
     "shuffled train loader, no sampler; deepspeed.initialize without training_data (:106): every rank trains on "
     "all of CIFAR"),
    ("microsoft+DeepSpeedExamples", "training/data_efficiency/vit_finetuning/main_cifar.py:88", "DL305", "M10",
     "val loader, every rank evaluates the whole set every epoch"),
    ("microsoft+DeepSpeedExamples", "training/gan/gan_deepspeed_train.py:82", "DL305", "M10",
     "shuffled loader, no sampler, two deepspeed.initialize calls without training_data (:110-111), one process "
     "per GPU (torch.cuda.set_device(args.local_rank)): every rank iterates the whole dataset"),
    ("microsoft+DeepSpeedExamples", "training/cifar/cifar10_deepspeed.py:238", "DL305", "M10",
     "test() builds a loader without a sampler on every rank (the train set goes through training_data=, :341); "
     "every rank evaluates the whole test set (rank 0 prints)"),
    # --- Project-MONAI/research-contributions: monai.data.DataLoader / ThreadDataLoader
    *(
        ("Project-MONAI+research-contributions", f"{folder}/utils/data_utils.py:{line}", "DL201", "M7",
         f"monai data.DataLoader(num_workers=args.workers, default 8) (M6 too), returned in a list "
         f"[train_loader, val_loader] that main.py subscripts (loader[0], loader[1]); trainer.py runs the "
         f"{which} loader {when}")
        for folder, lines in (
            ("SwinUNETR/BRATS21", (146, 156)),
            ("SwinUNETR/BTCV", (155, 166)),
            ("DAE/BTCV_Finetune", (154, 165)),
            ("DAE/Feta_Finetune", (148, 158)),
        )
        for line, which, when in zip(lines, ("train", "val"), ("every epoch", "every val_every epochs"))
    ),
    ("Project-MONAI+research-contributions", "SwinUNETR/Pretrain/utils/data_utils.py:132", "DL201", "M6",
     "monai DataLoader, 4 workers; main.py: `while global_step < num_steps: train(...)` iterates it per pass"),
    ("Project-MONAI+research-contributions", "SwinUNETR/Pretrain/utils/data_utils.py:137", "DL201", "M6",
     "val loader, validation() every eval_num steps"),
    ("Project-MONAI+research-contributions", "SwinUNETR/Pretrain/utils/data_utils.py:132", "DL206", "M6",
     "4 workers, no pin_memory; train() copies batch['image'].cuda() every step (main.py:39-41) (found when "
     "the shapes branch reported it)"),
    ("Project-MONAI+research-contributions", "SwinUNETR/Pretrain/utils/data_utils.py:137", "DL206", "M6",
     "val loader, validation() copies batch['image'].cuda() (main.py:119-120) (likewise)"),
    ("Project-MONAI+research-contributions", "SkullRec/monaiSkull.py:127", "DL201", "M6", "monai DataLoader, 4 workers, epoch loop (:169-175)"),
    ("Project-MONAI+research-contributions", "SkullRec/monaiSkull.py:129", "DL201", "M6", "every val_interval epochs (:189-193)"),
    *(
        ("Project-MONAI+research-contributions", f"SkullRec/monaiSkull.py:{line}", "DL206", "M6",
         "4 workers, batch['image'].to(device), device = torch.device('cuda:0'), no pin_memory")
        for line in (127, 129, 131)
    ),
    ("Project-MONAI+research-contributions", "auto3dseg/algorithm_templates/dints/scripts/train.py:400", "DL201", "M6",
     "val loader, num_workers from the config (2), re-run every validation round (:669)"),
    ("Project-MONAI+research-contributions", "auto3dseg/algorithm_templates/swinunetr/scripts/train.py:308", "DL201", "M6",
     "same (:568)"),
    ("Project-MONAI+research-contributions", "auto3dseg/algorithm_templates/dints/scripts/search.py:224", "DL201", "M6",
     "ThreadDataLoader(num_workers=6 from the config, shuffle=True) iterated every epoch (:320)"),
    ("Project-MONAI+research-contributions", "auto3dseg/algorithm_templates/dints/scripts/search.py:224", "DL206", "M6",
     "ThreadDataLoader with 6 workers, batch_data['image'].to(device) every step (:320-322), device cuda:N "
     "(likewise)"),
    *(
        ("Project-MONAI+research-contributions", f"lamp-automated-model-parallelism/train.py:{line}", "DL206", "M5",
         "batch field copied as Variable(x.cuda()) in the loop, multi-worker loader, no pin_memory")
        for line in (106, 135, 144)
    ),
)


def by_key() -> dict[tuple[str, str, str], tuple[str, str, str]]:
    """(source, "path:line", code) -> (verdict, shape, reason)."""
    table: dict[tuple[str, str, str], tuple[str, str, str]] = {}
    for source, where, code, verdict, shape, reason in JUDGMENTS:
        key = (source, where, code)
        if key in table:
            raise ValueError(f"judged twice: {key}")
        table[key] = (verdict, shape, reason)
    return table


def misses_by_key() -> dict[tuple[str, str, str], tuple[str, str]]:
    """(source, "path:line", code) -> (shape, reason) for each miss; a key also judged as a finding is an error."""
    judged = by_key()
    table: dict[tuple[str, str, str], tuple[str, str]] = {}
    for source, where, code, shape, reason in MISSES:
        key = (source, where, code)
        if key in table or key in judged:
            raise ValueError(f"miss listed twice or also judged as a finding: {key}")
        table[key] = (shape, reason)
    return table
